// Changes to a multi-key channel's row (services/multi-key.ts has the JSON): each is a read-modify-write of `key` and
// `channel_info` under the row's lock, so a key disabled by the relay, a console action and the polling index moving
// on never overwrite each other, on one node or many. The channel itself goes to status 3 when no key is left enabled,
// and back to 1 when an automatically disabled key comes back.
import type { Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import type { Database } from '../db/schema.js';
import { nowSec } from '../lib/time.js';
import {
  KEY_AUTO_DISABLED,
  KEY_ENABLED,
  enabledIndexes,
  keyStatus,
  markDisabled,
  markEnabled,
  parseChannelInfo,
  serializeChannelInfo,
  splitStoredKeys,
  type ChannelInfo,
} from './multi-key.js';

const STATUS_ENABLED = 1;
const STATUS_AUTO_DISABLED = 3;

export interface LockedChannel {
  id: number;
  name: string;
  key: string;
  keys: string[];
  info: ChannelInfo;
  status: number;
  otherInfo: string;
}

/** What an operation writes back; nothing when absent. */
export interface ChannelWrite {
  key?: string;
  info?: ChannelInfo;
  status?: number;
  /** the change is seen by routing (statuses, keys): the caches reload. The polling index alone is not. */
  announce?: boolean;
}

export interface Outcome<T> {
  result: T;
  write?: ChannelWrite;
}

function withStatusReason(otherInfo: string, reason: string): string {
  let info: Record<string, unknown> = {};
  try {
    const v = JSON.parse(otherInfo || '{}') as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) info = v as Record<string, unknown>;
  } catch {
    info = {};
  }
  info.status_reason = reason;
  info.status_time = nowSec();
  return JSON.stringify(info);
}

const ROW_COLUMNS = ['id', 'name', 'key', 'channel_info', 'status', 'other_info'] as const;

function lockedOf(row: {
  id: number;
  name: string;
  key: string;
  channel_info: unknown;
  status: number;
  other_info: string | null;
}): LockedChannel {
  return {
    id: row.id,
    name: row.name,
    key: row.key,
    keys: splitStoredKeys(row.key),
    info: parseChannelInfo(row.channel_info),
    status: row.status,
    otherInfo: row.other_info ?? '',
  };
}

/** The channel as it is stored now, without a lock (a read that writes nothing). */
export async function readChannel(ctx: AppContext, id: number): Promise<LockedChannel | undefined> {
  const row = await ctx.db.selectFrom('channels').select(ROW_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row && lockedOf(row);
}

async function lockRow(ctx: AppContext, trx: Transaction<Database>, id: number) {
  // SQLite: write first, so the transaction holds the file's write lock before it reads (another node's commit
  // between the read and the write would otherwise fail it); PostgreSQL and MySQL lock the row and read its latest
  if (ctx.dbKind === 'sqlite') {
    await trx.updateTable('channels').set({ id }).where('id', '=', id).execute();
    return trx.selectFrom('channels').select(ROW_COLUMNS).where('id', '=', id).executeTakeFirst();
  }
  return trx.selectFrom('channels').select(ROW_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * Runs `fn` on the channel's row under its lock and writes what it returns; undefined when the channel does not exist.
 * A status change also switches the channel's abilities, and every announced change reloads the channel caches.
 */
export async function withLockedChannel<T>(
  ctx: AppContext,
  id: number,
  fn: (row: LockedChannel) => Outcome<T>,
): Promise<T | undefined> {
  let announce = false;
  const result = await ctx.db.transaction().execute(async (trx) => {
    const row = await lockRow(ctx, trx, id);
    if (!row) return undefined;
    const locked = lockedOf(row);
    const out = fn(locked);
    const w = out.write;
    if (!w) return out.result;
    const set: Record<string, unknown> = {};
    if (w.key !== undefined) set.key = w.key;
    if (w.info) set.channel_info = serializeChannelInfo(w.info);
    if (w.status !== undefined && w.status !== row.status) {
      set.status = w.status;
      if (w.status === STATUS_AUTO_DISABLED)
        set.other_info = withStatusReason(locked.otherInfo, 'All keys are disabled');
    }
    if (Object.keys(set).length) await trx.updateTable('channels').set(set).where('id', '=', id).execute();
    if (set.status !== undefined)
      await trx
        .updateTable('abilities')
        .set({ enabled: w.status === STATUS_ENABLED })
        .where('channel_id', '=', id)
        .execute();
    announce = !!w.announce;
    return out.result;
  });
  if (announce) ctx.changes.publish({ kind: 'channels' });
  return result;
}

/** The index of `key`, looked for at `index` first (the keys may have been edited since the key was chosen). */
function indexOfKey(keys: string[], index: number, key: string): number {
  if (keys[index] === key) return index;
  return keys.indexOf(key);
}

export interface KeyChange {
  changed: boolean;
  /** the channel's status changed with it (all keys gone, or the first one back) */
  channelStatus: number | null;
  name: string;
}

/**
 * A failure that disables a key disables that key only (status 3, reason and time kept); the channel follows only when
 * no key is left enabled. A key already disabled, or no longer in the channel, changes nothing.
 */
export async function autoDisableKey(
  ctx: AppContext,
  channelId: number,
  index: number,
  key: string,
  reason: string,
): Promise<KeyChange> {
  const r = await withLockedChannel<KeyChange>(ctx, channelId, (row) => {
    const none: KeyChange = { changed: false, channelStatus: null, name: row.name };
    if (!row.info.is_multi_key) return { result: none };
    const i = indexOfKey(row.keys, index, key);
    if (i < 0 || keyStatus(row.info, i) !== KEY_ENABLED) return { result: none };
    const info = row.info;
    markDisabled(info, i, KEY_AUTO_DISABLED, reason, nowSec());
    info.multi_key_size = row.keys.length;
    const noneLeft = enabledIndexes(info, row.keys.length).length === 0;
    const status = noneLeft && row.status === STATUS_ENABLED ? STATUS_AUTO_DISABLED : undefined;
    return {
      result: { changed: true, channelStatus: status ?? null, name: row.name },
      write: { info, status, announce: true },
    };
  });
  return r ?? { changed: false, channelStatus: null, name: '' };
}

/**
 * Key `index` enabled again. `onlyAuto`: the recovery probe, which never enables a key disabled by hand. A channel
 * that was disabled automatically (all its keys gone) is enabled with it.
 */
export async function enableKey(
  ctx: AppContext,
  channelId: number,
  index: number,
  onlyAuto: boolean,
): Promise<KeyChange> {
  const r = await withLockedChannel<KeyChange>(ctx, channelId, (row) => {
    const none: KeyChange = { changed: false, channelStatus: null, name: row.name };
    if (!row.info.is_multi_key || index < 0 || index >= row.keys.length) return { result: none };
    const st = keyStatus(row.info, index);
    if (st === KEY_ENABLED || (onlyAuto && st !== KEY_AUTO_DISABLED)) return { result: none };
    const info = row.info;
    markEnabled(info, index);
    const status = row.status === STATUS_AUTO_DISABLED ? STATUS_ENABLED : undefined;
    return {
      result: { changed: true, channelStatus: status ?? null, name: row.name },
      write: { info, status, announce: true },
    };
  });
  return r ?? { changed: false, channelStatus: null, name: '' };
}

/**
 * Polling without Redis: the next enabled key from the stored index on, and the index moved past it, in one locked
 * step, so nodes sharing the database take turns. Null when no key is enabled (or the channel is gone).
 */
export async function nextPolledKeyFromDb(
  ctx: AppContext,
  channelId: number,
): Promise<{ index: number; key: string } | null> {
  const r = await withLockedChannel<{ index: number; key: string } | null>(ctx, channelId, (row) => {
    const n = row.keys.length;
    if (!row.info.is_multi_key || !n) return { result: null };
    const info = row.info;
    const index = nextEnabledFrom(info.multi_key_polling_index, n, (i) => keyStatus(info, i) === KEY_ENABLED);
    if (index < 0) return { result: null };
    info.multi_key_polling_index = (index + 1) % n;
    return { result: { index, key: row.keys[index] }, write: { info } };
  });
  return r ?? null;
}

/** new-api's polling step: from `start` (0 when out of range) the first index that `enabled` accepts, else -1. */
export function nextEnabledFrom(start: number, n: number, enabled: (i: number) => boolean): number {
  const from = start >= 0 && start < n ? start : 0;
  for (let k = 0; k < n; k++) {
    const i = (from + k) % n;
    if (enabled(i)) return i;
  }
  return -1;
}

/** The automatically disabled keys of a channel as stored now (the recovery probe's list). */
export async function autoDisabledKeys(ctx: AppContext, channelId: number): Promise<number[]> {
  const row = await ctx.db
    .selectFrom('channels')
    .select(['key', 'channel_info'])
    .where('id', '=', channelId)
    .executeTakeFirst();
  if (!row) return [];
  const info = parseChannelInfo(row.channel_info);
  if (!info.is_multi_key) return [];
  const n = splitStoredKeys(row.key).length;
  const out: number[] = [];
  for (let i = 0; i < n; i++) if (keyStatus(info, i) === KEY_AUTO_DISABLED) out.push(i);
  return out;
}
