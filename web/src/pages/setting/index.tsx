// System settings (/setting, spec §2 Settings page): root only, since the option API is root-only. Anyone else is
// sent on to their personal settings, which new-api showed under /setting (the OAuth return page ends a binding here).
// Tabs by the `tab` query parameter: operation (default), ratelimit, models, system, other.
import { lazy, Suspense } from 'react';
import { Alert, Grid, Select, Spin, Tabs } from 'antd';
import { useTranslation } from 'react-i18next';
import { translateServerMessage } from '../../i18n/server-message.js';
import { Navigate, useSearchParams } from 'react-router';
import { isRoot, useUser } from '../../context/user.js';
import PageHeader from '../../components/PageHeader.js';
import { useOptions } from './useOptions.js';
import { NS } from './i18n.js';

const OperationTab = lazy(() => import('./OperationTab.js'));
const RateLimitTab = lazy(() => import('./RateLimitTab.js'));
const ModelsTab = lazy(() => import('./ModelsTab.js'));
const SystemTab = lazy(() => import('./SystemTab.js'));
const OtherTab = lazy(() => import('./OtherTab.js'));

export const SETTING_TABS = ['operation', 'ratelimit', 'models', 'system', 'other'] as const;
export type SettingTab = (typeof SETTING_TABS)[number];

export function tabOf(param: string | null): SettingTab {
  return (SETTING_TABS as readonly string[]).includes(param ?? '') ? (param as SettingTab) : 'operation';
}

function Settings() {
  const { t } = useTranslation(NS);
  const [params, setParams] = useSearchParams();
  const tab = tabOf(params.get('tab'));
  const options = useOptions();
  const phone = Grid.useBreakpoint().md === false;

  if (options.isLoading) return <Spin />;
  if (options.error || !options.data) {
    return <Alert type="error" showIcon message={translateServerMessage(options.error?.message) || t('loadFailed')} />;
  }
  const o = options.data;
  const body = {
    operation: <OperationTab options={o} />,
    ratelimit: <RateLimitTab options={o} />,
    models: <ModelsTab options={o} />,
    system: <SystemTab options={o} />,
    other: <OtherTab options={o} />,
  }[tab];

  const choose = (k: string) => setParams(k === 'operation' ? {} : { tab: k });
  if (phone) {
    // five tab labels do not fit a phone's width (issue 46 point 12): the tabs become a picker above the sections
    return (
      <>
        <Select
          value={tab}
          onChange={choose}
          options={SETTING_TABS.map((k) => ({ value: k, label: t(`tab.${k}`) }))}
          style={{ width: '100%', marginBottom: 12 }}
          data-testid="setting-tab-select"
        />
        <Suspense fallback={<Spin />}>{body}</Suspense>
      </>
    );
  }
  return (
    <Tabs
      activeKey={tab}
      onChange={choose}
      items={SETTING_TABS.map((k) => ({
        key: k,
        label: t(`tab.${k}`),
        children: k === tab ? <Suspense fallback={<Spin />}>{body}</Suspense> : null,
      }))}
    />
  );
}

export default function SettingPage() {
  const { t } = useTranslation(NS);
  const { user } = useUser();
  return (
    <div data-testid="setting-page">
      <PageHeader title={t('title')} />
      {isRoot(user) ? <Settings /> : <Navigate to="/personal" replace />}
    </div>
  );
}
