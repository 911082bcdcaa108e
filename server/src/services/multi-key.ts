// Multi-key channels (new-api-compat.md, "Multi-key channels"): one channel holding many keys of one vendor, in
// new-api's `channel_info` JSON column: {is_multi_key, multi_key_size, multi_key_status_list{idx:status},
// multi_key_disabled_reason{idx:text}, multi_key_disabled_time{idx:unix}, multi_key_polling_index, multi_key_mode}.
// The keys themselves stay in `key`, one per line (a JSON array is read too, as new-api reads Vertex keys). A key
// absent from the status map is enabled; 2 is disabled by hand, 3 automatically. This file is the pure part: the
// JSON both ways and the key list; multi-key-store.ts changes rows, multi-key-pick.ts chooses a key per attempt.

export const KEY_ENABLED = 1;
export const KEY_MANUALLY_DISABLED = 2;
export const KEY_AUTO_DISABLED = 3;

export type MultiKeyMode = 'random' | 'polling';

/** new-api's ChannelInfo, as its JSON spells it (Go maps with int keys are objects with string keys). */
export interface ChannelInfo {
  is_multi_key: boolean;
  multi_key_size: number;
  multi_key_status_list: Record<string, number> | null;
  multi_key_disabled_reason?: Record<string, string>;
  multi_key_disabled_time?: Record<string, number>;
  multi_key_polling_index: number;
  multi_key_mode: string;
}

/** What new-api writes for a single-key channel (its zero ChannelInfo). */
export function singleKeyInfo(): ChannelInfo {
  return {
    is_multi_key: false,
    multi_key_size: 0,
    multi_key_status_list: null,
    multi_key_polling_index: 0,
    multi_key_mode: '',
  };
}

export const SINGLE_KEY_INFO_JSON = JSON.stringify(singleKeyInfo());

function numberMap(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) return out;
  for (const [k, n] of Object.entries(v)) if (/^\d+$/.test(k) && Number.isFinite(Number(n))) out[k] = Number(n);
  return out;
}

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) return out;
  for (const [k, s] of Object.entries(v)) if (/^\d+$/.test(k)) out[k] = String(s ?? '');
  return out;
}

/**
 * The column as read: text (SQLite, MariaDB), already parsed (PostgreSQL json, MySQL json), NULL (rows written before
 * the column existed, or by a test). Anything unreadable is a single-key channel.
 */
export function parseChannelInfo(raw: unknown): ChannelInfo {
  let v: unknown = raw;
  if (typeof raw === 'string') {
    if (!raw.trim()) return singleKeyInfo();
    try {
      v = JSON.parse(raw);
    } catch {
      return singleKeyInfo();
    }
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return singleKeyInfo();
  const o = v as Record<string, unknown>;
  const info: ChannelInfo = {
    is_multi_key: o.is_multi_key === true,
    multi_key_size: Number.isFinite(Number(o.multi_key_size)) ? Math.max(0, Math.trunc(Number(o.multi_key_size))) : 0,
    multi_key_status_list: o.multi_key_status_list == null ? null : numberMap(o.multi_key_status_list),
    multi_key_polling_index: Number.isFinite(Number(o.multi_key_polling_index))
      ? Math.trunc(Number(o.multi_key_polling_index))
      : 0,
    multi_key_mode: typeof o.multi_key_mode === 'string' ? o.multi_key_mode : '',
  };
  if (o.multi_key_disabled_reason != null) info.multi_key_disabled_reason = stringMap(o.multi_key_disabled_reason);
  if (o.multi_key_disabled_time != null) info.multi_key_disabled_time = numberMap(o.multi_key_disabled_time);
  return info;
}

/** The JSON new-api reads back (empty reason/time maps left out, as its omitempty does). */
export function serializeChannelInfo(info: ChannelInfo): string {
  const out: Record<string, unknown> = {
    is_multi_key: info.is_multi_key,
    multi_key_size: info.multi_key_size,
    multi_key_status_list: info.multi_key_status_list,
  };
  if (info.multi_key_disabled_reason && Object.keys(info.multi_key_disabled_reason).length)
    out.multi_key_disabled_reason = info.multi_key_disabled_reason;
  if (info.multi_key_disabled_time && Object.keys(info.multi_key_disabled_time).length)
    out.multi_key_disabled_time = info.multi_key_disabled_time;
  out.multi_key_polling_index = info.multi_key_polling_index;
  out.multi_key_mode = info.multi_key_mode;
  return JSON.stringify(out);
}

/** new-api's GetKeys: a JSON array (each element as its JSON text), else one key per line. */
export function splitStoredKeys(key: string): string[] {
  if (!key) return [];
  const trimmed = key.trim();
  if (trimmed.startsWith('[')) {
    try {
      const arr = JSON.parse(trimmed) as unknown;
      if (Array.isArray(arr)) return arr.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    } catch {
      // not an array after all: lines
    }
  }
  return key
    .replace(/^\n+|\n+$/g, '')
    .split('\n')
    .map((k) => k.trim());
}

/** How keys are stored: one per line (a Vertex service-account key is one line of compact JSON, as new-api stores it). */
export function joinKeys(keys: string[]): string {
  return keys.join('\n');
}

/** Status of key `i` (absent: enabled). */
export function keyStatus(info: ChannelInfo, i: number): number {
  return info.multi_key_status_list?.[String(i)] ?? KEY_ENABLED;
}

/** Indexes of the enabled keys among `size`. */
export function enabledIndexes(info: ChannelInfo, size: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < size; i++) if (keyStatus(info, i) === KEY_ENABLED) out.push(i);
  return out;
}

/** Marks key `i` disabled (2 or 3) with why and when. */
export function markDisabled(info: ChannelInfo, i: number, status: number, reason: string, now: number): void {
  const k = String(i);
  (info.multi_key_status_list ??= {})[k] = status;
  (info.multi_key_disabled_reason ??= {})[k] = reason;
  (info.multi_key_disabled_time ??= {})[k] = now;
}

/** Key `i` back to enabled: new-api deletes its entries. */
export function markEnabled(info: ChannelInfo, i: number): void {
  const k = String(i);
  if (info.multi_key_status_list) delete info.multi_key_status_list[k];
  if (info.multi_key_disabled_reason) delete info.multi_key_disabled_reason[k];
  if (info.multi_key_disabled_time) delete info.multi_key_disabled_time[k];
}

/**
 * The state after keeping only the keys at `kept` (old indexes, in order): statuses, reasons and times follow their key
 * to its new index (delete_key, delete_disabled_keys, a replace).
 */
export function reindex(info: ChannelInfo, kept: number[]): ChannelInfo {
  const out: ChannelInfo = { ...info, multi_key_status_list: {}, multi_key_size: kept.length };
  const reasons: Record<string, string> = {};
  const times: Record<string, number> = {};
  kept.forEach((old, i) => {
    const st = keyStatus(info, old);
    if (st !== KEY_ENABLED) {
      out.multi_key_status_list![String(i)] = st;
      const r = info.multi_key_disabled_reason?.[String(old)];
      if (r !== undefined) reasons[String(i)] = r;
      const t = info.multi_key_disabled_time?.[String(old)];
      if (t !== undefined) times[String(i)] = t;
    }
  });
  out.multi_key_disabled_reason = reasons;
  out.multi_key_disabled_time = times;
  if (out.multi_key_polling_index >= kept.length) out.multi_key_polling_index = 0;
  return out;
}

/** A new multi-key state for `size` keys, all enabled. */
export function freshMultiKeyInfo(size: number, mode: string): ChannelInfo {
  return {
    is_multi_key: true,
    multi_key_size: size,
    multi_key_status_list: {},
    multi_key_polling_index: 0,
    multi_key_mode: mode,
  };
}

/** The mode as the console sends it; anything else is refused by the caller. */
export function parseMultiKeyMode(v: unknown): MultiKeyMode | null {
  return v === 'random' || v === 'polling' ? v : null;
}

/**
 * How a key is shown: never whole (new-api's key_preview shows 10 characters, and a short key whole). A long key keeps
 * its first 6 and last 4 characters, as the token page masks tokens; a short one only a third of itself.
 */
export function keyPreview(key: string): string {
  if (key.length >= 20) return `${key.slice(0, 6)}…${key.slice(-4)}`;
  return `${key.slice(0, Math.floor(key.length / 3))}…`;
}
