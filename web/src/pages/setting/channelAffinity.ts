// The channel affinity form's logic (ChannelAffinitySection.tsx): new-api's `channel_affinity_setting.*` option rows,
// the rules checked before they are sent (the server checks them again: server/src/services/channel-affinity/), and
// the changed rows to save.
import type { OptionChange, Options } from './logic.js';

export const PREFIX = 'channel_affinity_setting.';
export const RULES = `${PREFIX}rules`;
export const STATS_URL = '/api/option/channel_affinity_cache';

export interface AffinityForm {
  enabled: boolean;
  switch_on_success: boolean;
  keep_on_channel_disabled: boolean;
  max_entries: number;
  default_ttl_seconds: number;
  rules: string;
}

export interface AffinityStats {
  enabled: boolean;
  total: number;
  unknown: number;
  by_rule_name: Record<string, number>;
  cache_capacity: number;
  cache_algo: string;
}

const SOURCE_TYPES = ['context_int', 'context_string', 'request_header', 'gjson'];

export function formOf(options: Options): AffinityForm {
  const num = (k: string, d: number) => {
    const n = Number(options[PREFIX + k]);
    return Number.isFinite(n) && n > 0 ? n : d;
  };
  const rules = options[RULES] ?? '[]';
  let pretty = rules;
  try {
    pretty = JSON.stringify(JSON.parse(rules), null, 2);
  } catch {
    // shown as stored, for the admin to fix
  }
  return {
    enabled: options[PREFIX + 'enabled'] === 'true',
    switch_on_success: options[PREFIX + 'switch_on_success'] === 'true',
    keep_on_channel_disabled: options[PREFIX + 'keep_on_channel_disabled'] === 'true',
    max_entries: num('max_entries', 100000),
    default_ttl_seconds: num('default_ttl_seconds', 3600),
    rules: pretty,
  };
}

/** A problem with the rules text as a message key and its values, or null. */
export type RulesProblem = { key: 'badJson' | 'notArray' | 'notObject' | 'badRegex' | 'badSource'; at?: string } | null;

/** A Go pattern's leading `(?i)` is a flag in JavaScript, as on the server. */
function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern.replace(/^\(\?[ims]+\)/, ''));
    return true;
  } catch {
    return false;
  }
}

export function rulesProblem(text: string): RulesProblem {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { key: 'badJson' };
  }
  if (!Array.isArray(parsed)) return { key: 'notArray' };
  for (let i = 0; i < parsed.length; i++) {
    const r = parsed[i] as Record<string, unknown>;
    const at = typeof r?.name === 'string' && r.name ? r.name : `#${i + 1}`;
    if (!r || typeof r !== 'object' || Array.isArray(r)) return { key: 'notObject', at };
    const patterns = [r.model_regex, r.path_regex, r.value_regex ? [r.value_regex] : []].flatMap((v) =>
      Array.isArray(v) ? v : v == null ? [] : [v],
    );
    if (patterns.some((p) => typeof p !== 'string' || !compiles(p))) return { key: 'badRegex', at };
    const sources = r.key_sources ?? [];
    if (!Array.isArray(sources)) return { key: 'badSource', at };
    for (const s of sources as Array<Record<string, unknown>>)
      if (!s || !SOURCE_TYPES.includes(String(s.type))) return { key: 'badSource', at };
  }
  return null;
}

/** The rows that differ from the stored ones (the rules compared as JSON, so formatting alone is no change). */
export function affinityChanges(options: Options, form: AffinityForm): OptionChange[] {
  const out: OptionChange[] = [];
  const put = (k: string, v: string) => {
    if ((options[PREFIX + k] ?? '') !== v) out.push({ key: PREFIX + k, value: v });
  };
  put('enabled', String(form.enabled));
  put('switch_on_success', String(form.switch_on_success));
  put('keep_on_channel_disabled', String(form.keep_on_channel_disabled));
  put('max_entries', String(Math.floor(form.max_entries)));
  put('default_ttl_seconds', String(Math.floor(form.default_ttl_seconds)));
  const compact = JSON.stringify(JSON.parse(form.rules));
  let stored = options[RULES] ?? '';
  try {
    stored = JSON.stringify(JSON.parse(stored));
  } catch {
    // an unreadable stored text differs from any valid one
  }
  if (compact !== stored) out.push({ key: RULES, value: compact });
  return out;
}
