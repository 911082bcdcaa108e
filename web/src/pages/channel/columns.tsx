// The channels table's columns (spec §2 Channels page, §4 channel states, §5 inline edit): the cells of channel
// rows and of tag rows, and the row actions, which call back into the page (index.tsx) that owns the state.
import { Button, InputNumber, Popconfirm, Space, Tag, Tooltip, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import type { TFunction } from 'i18next';
import { quiet } from '../../components/quiet.js';
import { renderGroupColor, renderTime } from '../../lib/render.js';
import { entryOf, type ChannelTypeEntry } from './catalogue.js';
import { parseStatusInfo, responseTimeColor, splitList, type Channel, type ChannelRow, type TagRow } from './logic.js';
import { isMultiKey } from './multi-key.js';

export type Row = ChannelRow | TagRow;
export const isTagRow = (r: Row): r is TagRow => (r as TagRow).isTag === true;
export type ChannelColumn = ColumnsType<Row>[number] & { key: string };

/** What the columns' cells and buttons need from the page. */
export interface ColumnContext {
  t: TFunction;
  channelTypes: readonly ChannelTypeEntry[] | undefined;
  /** channel ids whose test is running */
  testing: Record<number, boolean>;
  saveInline(ch: Channel, field: 'priority' | 'weight', raw: unknown): Promise<void>;
  updateBalance(ch: Channel): Promise<void>;
  tagAction(tag: string, action: 'enabled' | 'disabled'): Promise<void>;
  editTag(tag: string): void;
  testChannel(ch: Channel): Promise<void>;
  setStatus(id: number, status: number): Promise<unknown>;
  edit(id: number): void;
  copyChannel(ch: Channel): Promise<void>;
  deleteChannel(id: number): Promise<void>;
  /** opens the key manager of a multi-key channel */
  manageKeys(ch: Channel): void;
}

/** Every column, in the table's order (the page filters them by the user's column settings). */
export function channelColumns(c: ColumnContext): ChannelColumn[] {
  const {
    t,
    channelTypes,
    testing,
    saveInline,
    updateBalance,
    tagAction,
    editTag,
    testChannel,
    setStatus,
    edit,
    copyChannel,
    deleteChannel,
    manageKeys,
  } = c;

  const renderStatus = (ch: Channel) => {
    switch (ch.status) {
      case 1:
        return <Tag color="green">{t('status.enabled')}</Tag>;
      case 2:
        return <Tag color="red">{t('status.disabled')}</Tag>;
      case 3: {
        const info = parseStatusInfo(ch.other_info);
        const tip = (
          <div>
            <div>{t('status.reason', { reason: info.reason ?? '-' })}</div>
            <div>{t('status.time', { time: info.time ? renderTime(info.time) : '-' })}</div>
          </div>
        );
        return (
          <Tooltip title={tip}>
            <Tag color="gold">{t('status.autoDisabled')}</Tag>
          </Tooltip>
        );
      }
      default:
        return <Tag>{t('status.unknown')}</Tag>;
    }
  };

  const renderGroups = (group: string) => (
    <Space size={2} wrap>
      {splitList(group).map((g) => (
        <Tag key={g} color={renderGroupColor(g)}>
          {g}
        </Tag>
      ))}
    </Space>
  );

  const renderResponseTime = (ms: number) => {
    const { color, label } = responseTimeColor(ms);
    return (
      <Tag color={color}>
        {label === 'untested' ? t('rt.untested') : t('rt.seconds', { s: (ms / 1000).toFixed(2) })}
      </Tag>
    );
  };

  // Priority and weight are edited in place the same way: saved on blur or Enter, validated by saveInline.
  const inlineNumberColumn = (field: 'priority' | 'weight'): ChannelColumn => ({
    key: field,
    title: t(`col.${field}`),
    width: 110,
    render: (_, r) =>
      isTagRow(r) ? null : (
        <InputNumber
          size="small"
          style={{ width: 80 }}
          key={`${field[0]}${r.id}-${r[field] ?? 0}`}
          defaultValue={r[field] ?? 0}
          aria-label={`${field}-${r.id}`}
          onBlur={(e) => quiet(saveInline(r, field, e.target.value))}
          onPressEnter={(e) => quiet(saveInline(r, field, (e.target as HTMLInputElement).value))}
        />
      ),
  });

  return [
    {
      key: 'id',
      title: 'ID',
      width: 70,
      render: (_, r) => (isTagRow(r) ? null : r.id),
    },
    {
      key: 'name',
      title: t('col.name'),
      render: (_, r) =>
        isTagRow(r) ? (
          <Typography.Text strong>{r.tag}</Typography.Text>
        ) : (
          <Space size={4}>
            <span data-testid={`channel-name-${r.id}`}>{r.name}</span>
            {isMultiKey(r) && (
              <Tag color="purple" data-testid={`channel-multi-key-${r.id}`}>
                {t('mk.tag', { count: r.channel_info?.multi_key_size ?? 0 })}
              </Tag>
            )}
          </Space>
        ),
    },
    {
      key: 'group',
      title: t('col.group'),
      render: (_, r) =>
        isTagRow(r)
          ? renderGroups(Array.from(new Set(r.children.flatMap((c) => splitList(c.group)))).join(','))
          : renderGroups(r.group),
    },
    {
      key: 'type',
      title: t('col.type'),
      render: (_, r) => {
        if (isTagRow(r)) {
          return <Tag color="blue">{t('tag.rowLabel', { count: r.children.length })}</Tag>;
        }
        const info = entryOf(channelTypes, r.type);
        return <Tag color={info?.color ?? 'default'}>{info?.label ?? t('type.unknown', { type: r.type })}</Tag>;
      },
    },
    {
      key: 'status',
      title: t('col.status'),
      render: (_, r) => {
        if (!isTagRow(r)) return renderStatus(r);
        const enabled = r.children.filter((c) => c.status === 1).length;
        return (
          <Tag color={enabled === r.children.length ? 'green' : enabled === 0 ? 'red' : 'gold'}>
            {t('tag.enabledCount', { enabled, total: r.children.length })}
          </Tag>
        );
      },
    },
    {
      key: 'response_time',
      title: t('col.responseTime'),
      render: (_, r) => (isTagRow(r) ? null : renderResponseTime(r.response_time)),
    },
    {
      key: 'balance',
      title: t('col.balance'),
      render: (_, r) =>
        isTagRow(r) ? null : (
          <Tooltip title={t('col.balanceTip')}>
            <Tag color="blue" style={{ cursor: 'pointer' }} onClick={() => quiet(updateBalance(r))}>
              ${Number(r.balance ?? 0).toFixed(2)}
            </Tag>
          </Tooltip>
        ),
    },
    inlineNumberColumn('priority'),
    inlineNumberColumn('weight'),
    {
      key: 'tag',
      title: t('col.tag'),
      render: (_, r) => (isTagRow(r) ? null : r.tag ? <Tag data-testid={`channel-tag-${r.id}`}>{r.tag}</Tag> : null),
    },
    {
      key: 'actions',
      title: t('col.actions'),
      // Not pinned: a pinned column lies over whatever scrolls beneath it, and with long names or many models the tag
      // and weight cells scrolled under it at 1440 px (issue 34). The row's actions are reached by scrolling the table.
      render: (_, r) => {
        if (isTagRow(r)) {
          return (
            <Space size={4} style={{ whiteSpace: 'nowrap' }}>
              <Button size="small" onClick={() => quiet(tagAction(r.tag, 'enabled'))}>
                {t('tag.enableAll')}
              </Button>
              <Button size="small" danger onClick={() => quiet(tagAction(r.tag, 'disabled'))}>
                {t('tag.disableAll')}
              </Button>
              <Button size="small" type="primary" onClick={() => editTag(r.tag)}>
                {t('tag.edit')}
              </Button>
            </Space>
          );
        }
        return (
          <Space size={4} style={{ whiteSpace: 'nowrap' }}>
            <Button size="small" loading={!!testing[r.id]} onClick={() => quiet(testChannel(r))}>
              {t('action.test')}
            </Button>
            {r.status === 1 ? (
              <Button
                size="small"
                danger
                onClick={() => quiet(setStatus(r.id, 2))}
                data-testid={`channel-disable-${r.id}`}
              >
                {t('action.disable')}
              </Button>
            ) : (
              <Button size="small" onClick={() => quiet(setStatus(r.id, 1))} data-testid={`channel-enable-${r.id}`}>
                {t('action.enable')}
              </Button>
            )}
            <Button size="small" type="primary" onClick={() => edit(r.id)}>
              {t('action.edit')}
            </Button>
            {isMultiKey(r) && (
              <Button size="small" onClick={() => manageKeys(r)} data-testid={`channel-keys-${r.id}`}>
                {t('mk.manage')}
              </Button>
            )}
            <Popconfirm title={t('confirm.copy', { name: r.name })} onConfirm={() => quiet(copyChannel(r))}>
              <Button size="small" data-testid={`channel-copy-${r.id}`}>
                {t('action.copy')}
              </Button>
            </Popconfirm>
            <Popconfirm
              title={t('confirm.delete', { name: r.name })}
              okButtonProps={{ danger: true, 'data-testid': `channel-delete-confirm-${r.id}` }}
              onConfirm={() => quiet(deleteChannel(r.id))}
            >
              <Button size="small" danger type="text" data-testid={`channel-delete-${r.id}`}>
                {t('action.delete')}
              </Button>
            </Popconfirm>
          </Space>
        );
      },
    },
  ];
}
