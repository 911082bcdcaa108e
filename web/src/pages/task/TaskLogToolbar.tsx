// The filters of the drawing log and the task log (spec §2): time range, task id, platform (task log), channel (an
// admin's), status and type, with query and reset. They edit the draft filters; the page applies them on query.
import { useTranslation } from 'react-i18next';
import dayjs, { type Dayjs } from 'dayjs';
import { Button, DatePicker, Input, Select, Space } from 'antd';
import { TASKLOG_NS } from './i18n.js';
import { MJ_ACTIONS, MJ_STATUSES, TASK_ACTIONS, TASK_STATUSES, type Filters } from './logic.js';
import type { Kind } from './queries.js';

export default function TaskLogToolbar(props: {
  kind: Kind;
  admin: boolean;
  phone: boolean;
  filters: Filters;
  onChange(next: Partial<Filters>): void;
  onQuery(): void;
  onReset(): void;
}) {
  const { kind, admin, phone, filters, onChange, onQuery, onReset } = props;
  const { t } = useTranslation(TASKLOG_NS);
  const statuses = kind === 'mj' ? MJ_STATUSES : TASK_STATUSES;
  const actions = kind === 'mj' ? MJ_ACTIONS : TASK_ACTIONS;
  const range: [Dayjs | null, Dayjs | null] = [
    filters.start ? dayjs.unix(filters.start) : null,
    filters.end ? dayjs.unix(filters.end) : null,
  ];

  return (
    <Space
      wrap
      orientation={phone ? 'vertical' : 'horizontal'}
      style={{ marginBottom: 12, width: phone ? '100%' : undefined }}
    >
      <DatePicker.RangePicker
        showTime
        value={range}
        aria-label={t('filter.range')}
        placeholder={[t('filter.start'), t('filter.end')]}
        onChange={(v) => onChange({ start: v?.[0] ? v[0].unix() : 0, end: v?.[1] ? v[1].unix() : 0 })}
      />
      <Input
        allowClear
        name="task-id"
        placeholder={t(kind === 'mj' ? 'filter.mjId' : 'filter.taskId')}
        value={filters.id}
        onChange={(e) => onChange({ id: e.target.value })}
      />
      {kind === 'task' && (
        <Input
          allowClear
          name="platform"
          placeholder={t('filter.platform')}
          value={filters.platform}
          onChange={(e) => onChange({ platform: e.target.value })}
        />
      )}
      {admin && (
        <Input
          allowClear
          name="channel-id"
          placeholder={t('filter.channel')}
          value={filters.channel_id}
          onChange={(e) => onChange({ channel_id: e.target.value })}
        />
      )}
      <Select
        style={{ minWidth: 140 }}
        aria-label={t('filter.status')}
        data-testid="filter-status"
        value={filters.status}
        onChange={(v: string) => onChange({ status: v })}
        options={[
          { value: '', label: `${t('filter.status')}: ${t('filter.all')}` },
          ...statuses.map((s) => ({ value: s, label: t(`status.${s}`) })),
        ]}
      />
      <Select
        style={{ minWidth: 140 }}
        aria-label={t('filter.action')}
        value={filters.action}
        onChange={(v: string) => onChange({ action: v })}
        options={[
          { value: '', label: `${t('filter.action')}: ${t('filter.all')}` },
          ...actions.map((a) => ({ value: a, label: t(`action.${a}`) })),
        ]}
      />
      <Space>
        <Button type="primary" onClick={onQuery} data-testid="tasklog-query">
          {t('filter.query')}
        </Button>
        <Button onClick={onReset}>{t('filter.reset')}</Button>
      </Space>
    </Space>
  );
}
