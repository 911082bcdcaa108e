// Pure channel-page rules (spec §4 states and colours, §5 channel form / tag edit / inline edit and batch).
// Errors are i18n keys of the `channel` namespace so the rules stay testable without React.
import { typeFormSpec } from './types.js';
import type { ChannelInfo } from './multi-key.js';

export interface Channel {
  id: number;
  type: number;
  name: string;
  key?: string;
  openai_organization?: string | null;
  max_input_tokens?: number | null;
  base_url?: string | null;
  other?: string | null;
  model_mapping?: string | null;
  status_code_mapping?: string | null;
  models: string;
  auto_ban?: number | null;
  test_model?: string | null;
  group: string;
  priority?: number | null;
  weight?: number | null;
  tag?: string | null;
  setting?: string | null;
  param_override?: string | null;
  status: number;
  response_time: number;
  balance: number;
  used_quota: number;
  other_info?: string | null;
  created_time: number;
  balance_updated_time?: number;
  test_time?: number;
  /** new-api's multi-key state (multi-key.ts); absent from older servers */
  channel_info?: ChannelInfo | null;
}

export interface ChannelFormValues {
  type: number;
  name: string;
  key: string;
  openai_organization: string;
  base_url: string;
  other: string;
  models: string[];
  groups: string[];
  model_mapping: string;
  status_code_mapping: string;
  param_override: string;
  /** Extra channel settings (new-api-compat.md §2.3: force_format, proxy, thinking_to_content), a JSON object. */
  setting: string;
  max_input_tokens: number | string | null;
  test_model: string;
  auto_ban: boolean;
  priority: number | string | null;
  weight: number | string | null;
  tag: string;
}

/** Spec §9 channel defaults: type 1, group default, auto_ban 1, priority 0, weight 0. */
export function defaultChannelForm(): ChannelFormValues {
  return {
    type: 1,
    name: '',
    key: '',
    openai_organization: '',
    base_url: '',
    other: '',
    models: [],
    groups: ['default'],
    model_mapping: '',
    status_code_mapping: '',
    param_override: '',
    setting: '',
    max_input_tokens: 0,
    test_model: '',
    auto_ban: true,
    priority: 0,
    weight: 0,
    tag: '',
  };
}

export function splitList(s: string | null | undefined): string[] {
  return (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

export function channelToForm(ch: Channel): ChannelFormValues {
  return {
    type: ch.type,
    name: ch.name ?? '',
    key: '',
    openai_organization: ch.openai_organization ?? '',
    base_url: ch.base_url ?? '',
    other: ch.other ?? '',
    models: splitList(ch.models),
    groups: splitList(ch.group),
    model_mapping: ch.model_mapping ?? '',
    status_code_mapping: ch.status_code_mapping ?? '',
    param_override: ch.param_override ?? '',
    setting: ch.setting ?? '',
    max_input_tokens: ch.max_input_tokens ?? 0,
    test_model: ch.test_model ?? '',
    auto_ban: (ch.auto_ban ?? 1) === 1,
    priority: ch.priority ?? 0,
    weight: ch.weight ?? 0,
    tag: ch.tag ?? '',
  };
}

export function isValidJson(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** JSON object check for mapping fields: a bare number or array is not a mapping. */
export function isJsonObject(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    const v: unknown = JSON.parse(text);
    return !!v && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** Trailing slashes are stripped (spec §5). */
export function normalizeBaseUrl(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

/** A base URL ending in /v1 asks for confirmation: the gateway appends the /v1 path itself. */
export function baseUrlEndsWithV1(url: string): boolean {
  return /\/v1$/.test(normalizeBaseUrl(url));
}

function toInt(v: number | string | null | undefined): number {
  const n = parseInt(String(v ?? '0'), 10);
  return Number.isFinite(n) ? n : 0;
}

/** max_input_tokens: empty means 0 (no limit); otherwise a non-negative integer, else null. */
export function parseMaxInputTokens(v: number | string | null | undefined): number | null {
  const s = String(v ?? '').trim();
  if (s === '') return 0;
  return /^\d+$/.test(s) ? Number(s) : null;
}

export type ChannelPayload = Record<string, unknown>;

export type FormCheck =
  | { ok: true; payload: ChannelPayload; confirmV1: boolean }
  | { ok: false; error: string; params?: Record<string, string> };

/**
 * Validates the drawer and builds the wire payload (models/groups as comma strings, integers parsed). The rules of a
 * vendor's own fields (key format, region) are the server's: the drawer asks POST /api/channel/check next.
 */
export function checkChannelForm(v: ChannelFormValues, editId?: number): FormCheck {
  const isEdit = editId !== undefined;
  if (!isEdit && (v.name.trim() === '' || v.key.trim() === '')) return { ok: false, error: 'err.nameKey' };
  if (isEdit && v.name.trim() === '') return { ok: false, error: 'err.nameKey' };
  if (v.models.length === 0) return { ok: false, error: 'err.models' };
  if (!isJsonObject(v.model_mapping)) return { ok: false, error: 'err.mapping' };
  if (!isJsonObject(v.status_code_mapping)) return { ok: false, error: 'err.statusMapping' };
  if (!isJsonObject(v.param_override)) return { ok: false, error: 'err.paramOverride' };
  if (!isJsonObject(v.setting)) return { ok: false, error: 'err.setting' };
  const maxInputTokens = parseMaxInputTokens(v.max_input_tokens);
  if (maxInputTokens === null) return { ok: false, error: 'err.maxInputTokens' };
  const spec = typeFormSpec(v.type);
  const base = normalizeBaseUrl(v.base_url);
  if (spec.baseUrlRequired && base === '') return { ok: false, error: 'err.baseUrl' };
  let other = v.other.trim();
  if (other === '' && spec.otherDefault) other = spec.otherDefault;
  const payload: ChannelPayload = {
    type: v.type,
    name: v.name.trim(),
    base_url: base,
    other,
    models: v.models.join(','),
    group: (v.groups.length ? v.groups : ['default']).join(','),
    model_mapping: v.model_mapping.trim(),
    status_code_mapping: v.status_code_mapping.trim(),
    param_override: v.param_override.trim(),
    setting: v.setting.trim(),
    max_input_tokens: maxInputTokens,
    test_model: v.test_model.trim(),
    auto_ban: v.auto_ban ? 1 : 0,
    priority: toInt(v.priority),
    weight: toInt(v.weight),
    tag: v.tag.trim(),
    openai_organization: v.type === 1 ? v.openai_organization.trim() : '',
  };
  // On edit an empty key keeps the stored one; on create each non-empty line becomes a channel (server side),
  // except Vertex whose key is one JSON document.
  const key = spec.keyIsJson
    ? v.key.trim()
    : v.key
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .join('\n');
  if (key !== '') payload.key = key;
  if (isEdit) payload.id = editId;
  return { ok: true, payload, confirmV1: baseUrlEndsWithV1(v.base_url) };
}

/** Number of channels a create will produce: one per non-empty key line (Vertex: one). */
export function keyLineCount(key: string, type: number): number {
  if (typeFormSpec(type).keyIsJson) return key.trim() ? 1 : 0;
  return key.split('\n').filter((l) => l.trim() !== '').length;
}

/** Adds comma/newline separated custom models; reports whether any was already there (某些模型已存在！). */
export function addCustomModels(
  existing: string[],
  input: string,
): { models: string[]; duplicated: boolean; added: number } {
  const wanted = input
    .split(/[,\n]/)
    .map((m) => m.trim())
    .filter(Boolean);
  const set = new Set(existing);
  let duplicated = false;
  let added = 0;
  const models = [...existing];
  for (const m of wanted) {
    if (set.has(m)) {
      duplicated = true;
      continue;
    }
    set.add(m);
    models.push(m);
    added++;
  }
  return { models, duplicated, added };
}

export function mergeModels(existing: string[], more: string[]): string[] {
  return Array.from(new Set([...existing, ...more]));
}

/** Inline priority: an integer, not below -999 (优先级必须是整数！). Returns the value or null. */
export function parseInlinePriority(raw: unknown): number | null {
  const s = String(raw ?? '').trim();
  if (!/^-?\d+$/.test(s)) return null;
  const n = Number(s);
  return n >= -999 ? n : null;
}

/** Inline weight: a non-negative integer (权重必须是非负整数！). */
export function parseInlineWeight(raw: unknown): number | null {
  const s = String(raw ?? '').trim();
  if (!/^\d+$/.test(s)) return null;
  return Number(s);
}

export interface TagEditValues {
  new_tag: string;
  priority: number | string | null;
  weight: number | string | null;
  model_mapping: string;
  models: string[];
  groups: string[];
}

export type TagEditCheck = { ok: true; payload: Record<string, unknown> } | { ok: false; error: string };

/** PUT /api/channel/tag payload: only changed fields are sent; a blank new tag dissolves the tag. */
export function buildTagEditPayload(tag: string, v: TagEditValues): TagEditCheck {
  const payload: Record<string, unknown> = { tag };
  let changed = false;
  if (v.new_tag.trim() !== tag) {
    payload.new_tag = v.new_tag.trim();
    changed = true;
  }
  if (v.model_mapping.trim() !== '') {
    if (!isJsonObject(v.model_mapping)) return { ok: false, error: 'err.mapping' };
    payload.model_mapping = v.model_mapping.trim();
    changed = true;
  }
  const pr = v.priority === null || v.priority === '' ? null : parseInlinePriority(v.priority);
  if (v.priority !== null && v.priority !== '') {
    if (pr === null) return { ok: false, error: 'err.priority' };
    payload.priority = pr;
    changed = true;
  }
  if (v.weight !== null && v.weight !== '') {
    const w = parseInlineWeight(v.weight);
    if (w === null) return { ok: false, error: 'err.weight' };
    payload.weight = w;
    changed = true;
  }
  if (v.models.length) {
    payload.models = v.models.join(',');
    changed = true;
  }
  if (v.groups.length) {
    payload.groups = v.groups.join(',');
    changed = true;
  }
  if (!changed) return { ok: false, error: 'err.noChange' };
  return { ok: true, payload };
}

/** Spec §4 response time: 0 = not tested; ≤1 s, ≤3 s, ≤5 s graded; slower is red. */
export function responseTimeColor(ms: number): { color: string; label: 'untested' | 'time' } {
  if (!ms) return { color: 'default', label: 'untested' };
  const s = ms / 1000;
  if (s <= 1) return { color: 'green', label: 'time' };
  if (s <= 3) return { color: 'lime', label: 'time' };
  if (s <= 5) return { color: 'gold', label: 'time' };
  return { color: 'red', label: 'time' };
}

export function parseStatusInfo(otherInfo: string | null | undefined): { reason?: string; time?: number } {
  if (!otherInfo) return {};
  try {
    const o = JSON.parse(otherInfo) as { status_reason?: unknown; status_time?: unknown };
    return {
      reason: typeof o.status_reason === 'string' ? o.status_reason : undefined,
      time: typeof o.status_time === 'number' ? o.status_time : undefined,
    };
  } catch {
    return {};
  }
}

export interface TagRow {
  rowKey: string;
  isTag: true;
  tag: string;
  children: ChannelRow[];
}
export type ChannelRow = Channel & { rowKey: string; isTag?: false };

/** Tag mode: channels sharing a tag collapse under one parent row; untagged channels stay top-level, in order. */
export function groupByTag(channels: Channel[]): (TagRow | ChannelRow)[] {
  const out: (TagRow | ChannelRow)[] = [];
  const tags = new Map<string, TagRow>();
  for (const ch of channels) {
    const row: ChannelRow = { ...ch, rowKey: `c${ch.id}` };
    const tag = ch.tag ?? '';
    if (!tag) {
      out.push(row);
      continue;
    }
    let parent = tags.get(tag);
    if (!parent) {
      parent = { rowKey: `t:${tag}`, isTag: true, tag, children: [] };
      tags.set(tag, parent);
      out.push(parent);
    }
    parent.children.push(row);
  }
  return out;
}
