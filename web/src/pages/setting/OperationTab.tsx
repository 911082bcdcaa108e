// Operation tab: general, quota, group, model ratios, chats, drawing, sensitive words, logs, dashboard, monitoring.
import { useTranslation } from 'react-i18next';
import type { Options } from './logic.js';
import {
  CHATS_FIELDS,
  CHECKIN_FIELDS,
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
import ChannelAffinitySection from './ChannelAffinitySection.js';
import { NS } from './i18n.js';
import SectionLayout from './SectionLayout.js';
import type { FieldDef } from './logic.js';
import type { ReactNode } from 'react';

export default function OperationTab({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  const section = (id: string, fields: FieldDef[], more?: ReactNode) => ({
    id,
    title: t(`sec.${id}`),
    node: (
      <OptionSection id={id} title={t(`sec.${id}`)} fields={fields} options={options}>
        {more}
      </OptionSection>
    ),
  });
  return (
    <SectionLayout
      sections={[
        section('general', GENERAL_FIELDS),
        section('quota', QUOTA_FIELDS),
        section('checkin', CHECKIN_FIELDS),
        section('group', GROUP_FIELDS),
        { id: 'ratio', title: t('sec.ratio'), node: <ModelRatioSettings options={options} /> },
        section('chats', CHATS_FIELDS),
        section('drawing', DRAWING_FIELDS),
        section('sensitive', SENSITIVE_FIELDS),
        section('log', LOG_FIELDS, <LogCleanup />),
        section('dashboard', DASHBOARD_FIELDS),
        section('monitor', MONITOR_FIELDS),
        { id: 'affinity', title: t('sec.affinity'), node: <ChannelAffinitySection options={options} /> },
      ]}
    />
  );
}
