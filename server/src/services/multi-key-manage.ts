// POST /api/channel/multi_key/manage (new-api's ManageMultiKeys, its actions, answers and messages): the key manager of
// a multi-key channel. Every change is one locked read-modify-write of the row (multi-key-store.ts) and reloads the
// channel caches. Keys never leave the server whole: get_key_status shows a preview (multi-key.ts keyPreview).
import type { AppContext } from '../context.js';
import { nowSec } from '../lib/time.js';
import { ChannelInputError, intOf, isBlank, type Body } from './channel-input.js';
import { readChannel, withLockedChannel, type LockedChannel, type Outcome } from './multi-key-store.js';
import {
  KEY_AUTO_DISABLED,
  KEY_ENABLED,
  KEY_MANUALLY_DISABLED,
  enabledIndexes,
  joinKeys,
  keyPreview,
  keyStatus,
  markDisabled,
  markEnabled,
  reindex,
  type ChannelInfo,
} from './multi-key.js';

const STATUS_ENABLED = 1;
const STATUS_AUTO_DISABLED = 3;

export interface KeyStatusRow {
  index: number;
  status: number;
  disabled_time?: number;
  reason?: string;
  key_preview: string;
}

export interface KeyStatusPage {
  keys: KeyStatusRow[];
  total: number;
  page: number;
  page_size: number;
  total_pages: number;
  enabled_count: number;
  manual_disabled_count: number;
  auto_disabled_count: number;
}

export interface ManageAnswer {
  message: string;
  data?: unknown;
}

type Action = (row: LockedChannel, req: ManageRequest) => Outcome<ManageAnswer>;

interface ManageRequest {
  keyIndex: number | null;
  page: number;
  pageSize: number;
  status: number | null;
}

function requestOf(body: Body): ManageRequest {
  const n = (v: unknown) => (isBlank(v) ? null : intOf(v));
  return {
    keyIndex: n(body.key_index),
    page: n(body.page) ?? 0,
    pageSize: n(body.page_size) ?? 0,
    status: n(body.status),
  };
}

/** The key index an action names, within the channel's keys; `missing` is new-api's message when none is given. */
function indexOf(row: LockedChannel, req: ManageRequest, missing: string): number {
  if (req.keyIndex === null) throw new ChannelInputError(missing);
  if (req.keyIndex < 0 || req.keyIndex >= row.keys.length) throw new ChannelInputError('密钥索引超出范围');
  return req.keyIndex;
}

/** After a console change: a channel disabled because it had no key left comes back once one is enabled. */
function written(row: LockedChannel, info: ChannelInfo, answer: ManageAnswer, key?: string): Outcome<ManageAnswer> {
  const size = key === undefined ? row.keys.length : info.multi_key_size;
  info.multi_key_size = size;
  const back = row.status === STATUS_AUTO_DISABLED && enabledIndexes(info, size).length > 0;
  return { result: answer, write: { info, key, status: back ? STATUS_ENABLED : undefined, announce: true } };
}

function keyStatusPage(row: LockedChannel, req: ManageRequest): KeyStatusPage {
  const counts = { [KEY_ENABLED]: 0, [KEY_MANUALLY_DISABLED]: 0, [KEY_AUTO_DISABLED]: 0 } as Record<number, number>;
  const all: KeyStatusRow[] = row.keys.map((key, index) => {
    const status = keyStatus(row.info, index);
    counts[status] = (counts[status] ?? 0) + 1;
    const out: KeyStatusRow = { index, status, key_preview: keyPreview(key) };
    if (status !== KEY_ENABLED) {
      const t = row.info.multi_key_disabled_time?.[String(index)];
      const r = row.info.multi_key_disabled_reason?.[String(index)];
      if (t) out.disabled_time = t;
      if (r) out.reason = r;
    }
    return out;
  });
  const filtered = req.status === null ? all : all.filter((k) => k.status === req.status);
  const pageSize = req.pageSize > 0 ? Math.min(req.pageSize, 1000) : 50;
  const totalPages = Math.max(1, Math.ceil(filtered.length / pageSize));
  const page = Math.min(req.page > 0 ? req.page : 1, totalPages);
  return {
    keys: filtered.slice((page - 1) * pageSize, page * pageSize),
    total: filtered.length,
    page,
    page_size: pageSize,
    total_pages: totalPages,
    enabled_count: counts[KEY_ENABLED],
    manual_disabled_count: counts[KEY_MANUALLY_DISABLED],
    auto_disabled_count: counts[KEY_AUTO_DISABLED],
  };
}

/** The channel without the keys at `drop` (statuses, reasons and times follow the keys that stay). */
function withoutKeys(row: LockedChannel, drop: (i: number) => boolean, answer: ManageAnswer): Outcome<ManageAnswer> {
  const kept = row.keys.map((_, i) => i).filter((i) => !drop(i));
  const info = reindex(row.info, kept);
  return written(row, info, answer, joinKeys(kept.map((i) => row.keys[i])));
}

const ACTIONS: Record<string, Action> = {
  get_key_status: (row, req) => ({ result: { message: '', data: keyStatusPage(row, req) } }),

  disable_key: (row, req) => {
    const i = indexOf(row, req, '未指定要禁用的密钥索引');
    // by hand: no reason, the time kept; the recovery probe never enables it
    markDisabled(row.info, i, KEY_MANUALLY_DISABLED, '', nowSec());
    return written(row, row.info, { message: '密钥已禁用' });
  },

  enable_key: (row, req) => {
    const i = indexOf(row, req, '未指定要启用的密钥索引');
    markEnabled(row.info, i);
    return written(row, row.info, { message: '密钥已启用' });
  },

  enable_all_keys: (row) => {
    const n = Object.keys(row.info.multi_key_status_list ?? {}).length;
    const info: ChannelInfo = {
      ...row.info,
      multi_key_status_list: {},
      multi_key_disabled_reason: {},
      multi_key_disabled_time: {},
    };
    return written(row, info, { message: `已启用 ${n} 个密钥` });
  },

  disable_all_keys: (row) => {
    const now = nowSec();
    const enabled = enabledIndexes(row.info, row.keys.length);
    if (!enabled.length) throw new ChannelInputError('没有可禁用的密钥');
    for (const i of enabled) markDisabled(row.info, i, KEY_MANUALLY_DISABLED, '', now);
    return written(row, row.info, { message: `已禁用 ${enabled.length} 个密钥` });
  },

  delete_key: (row, req) => {
    const i = indexOf(row, req, '未指定要删除的密钥索引');
    if (row.keys.length <= 1) throw new ChannelInputError('不能删除最后一个密钥');
    return withoutKeys(row, (k) => k === i, { message: '密钥已删除' });
  },

  delete_disabled_keys: (row) => {
    const auto = (i: number) => keyStatus(row.info, i) === KEY_AUTO_DISABLED;
    const n = row.keys.filter((_, i) => auto(i)).length;
    if (!n) throw new ChannelInputError('没有需要删除的自动禁用密钥');
    // new-api would leave a channel without keys when every key was disabled automatically; one is kept
    if (n === row.keys.length) throw new ChannelInputError('不能删除最后一个密钥');
    return withoutKeys(row, auto, { message: `已删除 ${n} 个自动禁用的密钥`, data: n });
  },
};

export async function manageMultiKeys(ctx: AppContext, body: Body): Promise<ManageAnswer> {
  const channelId = intOf(body.channel_id);
  const action = typeof body.action === 'string' ? ACTIONS[body.action] : undefined;
  if (channelId === null || channelId <= 0) throw new ChannelInputError('渠道不存在');
  const req = requestOf(body);
  if (req.keyIndex === null && !isBlank(body.key_index)) throw new ChannelInputError('密钥索引超出范围');
  const run = (row: LockedChannel) => {
    if (!row.info.is_multi_key) throw new ChannelInputError('该渠道不是多密钥模式');
    if (!action || !Object.hasOwn(ACTIONS, body.action as string)) throw new ChannelInputError('不支持的操作');
    return action(row, req);
  };
  // the status page is a read: no lock, nothing written
  const answer =
    body.action === 'get_key_status'
      ? await readChannel(ctx, channelId).then((row) => row && run(row).result)
      : await withLockedChannel(ctx, channelId, run);
  if (!answer) throw new ChannelInputError('渠道不存在');
  return answer;
}
