// Operation tab: general, quota, group, model ratios, chats, drawing, sensitive words, logs, dashboard, monitoring.
import { useTranslation } from 'react-i18next';
import type { Options } from './logic.js';
import {
  CHATS_FIELDS,
  DASHBOARD_FIELDS,
  DRAWING_FIELDS,
  GENERAL_FIELDS,
  GROUP_FIELDS,
  LOG_FIELDS,
  MONITOR_FIELDS,
  QUOTA_FIELDS,
  SENSITIVE_FIELDS,
} from './fields.js';
import OptionSection from './OptionSection.js';
import ModelRatioSettings from './operation/ModelRatioSettings.js';
import LogCleanup from './operation/LogCleanup.js';
import { NS } from './i18n.js';

export default function OperationTab({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  return (
    <>
      <OptionSection id="general" title={t('sec.general')} fields={GENERAL_FIELDS} options={options} />
      <OptionSection id="quota" title={t('sec.quota')} fields={QUOTA_FIELDS} options={options} />
      <OptionSection id="group" title={t('sec.group')} fields={GROUP_FIELDS} options={options} />
      <ModelRatioSettings options={options} />
      <OptionSection id="chats" title={t('sec.chats')} fields={CHATS_FIELDS} options={options} />
      <OptionSection id="drawing" title={t('sec.drawing')} fields={DRAWING_FIELDS} options={options} />
      <OptionSection id="sensitive" title={t('sec.sensitive')} fields={SENSITIVE_FIELDS} options={options} />
      <OptionSection id="log" title={t('sec.log')} fields={LOG_FIELDS} options={options}>
        <LogCleanup />
      </OptionSection>
      <OptionSection id="dashboard" title={t('sec.dashboard')} fields={DASHBOARD_FIELDS} options={options} />
      <OptionSection id="monitor" title={t('sec.monitor')} fields={MONITOR_FIELDS} options={options} />
    </>
  );
}
