// Multi-key channels in the console (new-api's add modes, multi-key modes and key manager; the server's rules are in
// server/src/services/multi-key*.ts). Pure helpers for the drawer's add mode and the key manager dialog.
import { typeFormSpec } from './types.js';
import type { ChannelPayload } from './logic.js';

/** single: the key kept whole; batch: one channel per key; multi_to_single: one channel holding every key. */
export type AddMode = 'single' | 'batch' | 'multi_to_single';
/** How a multi-key channel chooses the key of each request. */
export type MultiKeyMode = 'random' | 'polling';
/** What an edit does with the keys typed: add them to the channel's, or put them in their place. */
export type KeyEditMode = 'append' | 'replace';

/** new-api's channel_info, as GET /api/channel answers it. */
export interface ChannelInfo {
  is_multi_key: boolean;
  multi_key_size: number;
  multi_key_status_list: Record<string, number> | null;
  multi_key_polling_index: number;
  multi_key_mode: string;
}

export const KEY_STATUS = { enabled: 1, manual: 2, auto: 3 } as const;

/** One key as get_key_status answers it (never the key itself: a preview). */
export interface KeyStatusRow {
  index: number;
  status: number;
  disabled_time?: number;
  reason?: string;
  key_preview: string;
}

export interface KeyStatusPage {
  keys: KeyStatusRow[] | null;
  total: number;
  page: number;
  page_size: number;
  total_pages: number;
  enabled_count: number;
  manual_disabled_count: number;
  auto_disabled_count: number;
}

export function isMultiKey(ch: { channel_info?: ChannelInfo | null }): boolean {
  return !!ch.channel_info?.is_multi_key;
}

/**
 * The body of POST /api/channel/: the channel itself for a batch (the snapshot's body, which every server splits per
 * line), else wrapped with its mode as new-api's later consoles send it.
 */
export function createBody(payload: ChannelPayload, mode: AddMode, multiKeyMode: MultiKeyMode): ChannelPayload {
  if (mode === 'batch') return payload;
  const body: ChannelPayload = { mode, channel: payload };
  if (mode === 'multi_to_single') body.multi_key_mode = multiKeyMode;
  return body;
}

/** How many keys the typed text holds in this mode: lines, or for a JSON-document key (Vertex AI) a JSON array. */
export function keyCount(key: string, type: number, mode: AddMode): number {
  const text = key.trim();
  if (!text) return 0;
  if (mode === 'single') return 1;
  if (!typeFormSpec(type).keyIsJson) return key.split('\n').filter((l) => l.trim() !== '').length;
  if (!text.startsWith('[')) return 1;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.length : 1;
  } catch {
    return 0;
  }
}

/** The i18n key and count of the hint under the key on create. */
export function addKeyHint(key: string, type: number, mode: AddMode): [string, { count: number }] {
  const count = keyCount(key, type, mode);
  if (mode === 'single') return ['mk.singleHint', { count }];
  if (mode === 'multi_to_single') return ['mk.multiHint', { count }];
  return count > 1 ? ['form.keyBatchHint', { count }] : ['form.keyLineHint', { count }];
}

/** The fields an edit of a multi-key channel adds to PUT /api/channel/. */
export function multiKeyEdit(payload: ChannelPayload, mode: MultiKeyMode, keyMode: KeyEditMode): ChannelPayload {
  const out: ChannelPayload = { ...payload, multi_key_mode: mode };
  if (typeof payload.key === 'string' && payload.key !== '') out.key_mode = keyMode;
  return out;
}

/** The i18n key of a key's status tag, and its colour. */
export function keyStatusTag(status: number): { label: string; color: string } {
  switch (status) {
    case KEY_STATUS.enabled:
      return { label: 'mk.status.enabled', color: 'green' };
    case KEY_STATUS.manual:
      return { label: 'mk.status.manual', color: 'red' };
    case KEY_STATUS.auto:
      return { label: 'mk.status.auto', color: 'gold' };
    default:
      return { label: 'status.unknown', color: 'default' };
  }
}
