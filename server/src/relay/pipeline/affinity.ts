// Channel affinity in the pipeline (services/channel-affinity/, new-api-compat.md, "Channel affinity"). route.ts asks matchAffinity
// first: with no rule for the request's path and model it is a flag test and a few compiled regex tests, and the body
// parsed by parse.ts is read, never parsed again. A matching rule's remembered channel is taken only when the normal
// choice could have picked it (an enabled ability of an enabled channel in the request's group and model, under its
// daily cap): affinity prefers, it never widens a token's group or model limits. attempts.ts remembers the channel
// that answered, and does not retry elsewhere when the sticky channel failed under a rule with skip_retry_on_failure.
import type { IncomingHttpHeaders } from 'node:http';
import type { CachedChannel } from '../../services/cache/channel-cache.js';
import type { CompiledAffinity, CompiledRule, KeySource, TextTest } from '../../services/channel-affinity/setting.js';
import { usageLimits } from '../../services/limits/index.js';
import type { RelayState } from './state.js';

export interface AffinityHit {
  /** the key after new-api's namespace: `[rule:][model:][group:]value` */
  suffix: string;
  rule: CompiledRule;
  ttlSeconds: number;
  /** the remembered channel was taken (new-api's MarkChannelAffinityUsed): its failure may stop retries */
  used: boolean;
  /** the channel routed first, remembered when switch_on_success is off */
  first: number;
}

/** The rule that applies to this request and its key, or null (the common case, cheaply). */
export function matchAffinity(s: RelayState): AffinityHit | null {
  const a = s.svc.affinity.setting;
  if (!a.enabled || a.rules.length === 0) return null;
  return findRule(s, a);
}

function findRule(s: RelayState, a: CompiledAffinity): AffinityHit | null {
  const url = s.req.url;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  for (const rule of a.rules) {
    if (rule.paths.length && !some(rule.paths, path)) continue;
    if (!some(rule.models, s.model)) continue;
    if (rule.agents.length && !agentIncludes(rule.agents, s.req.headers['user-agent'])) continue;
    let value = '';
    for (const src of rule.sources) if ((value = sourceValue(s, src))) break;
    if (!value || (rule.value && !rule.value.test(value))) continue;
    let suffix = '';
    if (rule.includeName && rule.name) suffix += rule.name + ':';
    if (rule.includeModel && s.model) suffix += s.model + ':';
    if (rule.includeGroup && s.group) suffix += s.group + ':';
    return {
      suffix: suffix + value,
      rule,
      ttlSeconds: rule.ttlSeconds > 0 ? rule.ttlSeconds : a.defaultTtlSeconds,
      used: false,
      first: 0,
    };
  }
  return null;
}

function some(tests: TextTest[], text: string): boolean {
  if (!text) return false;
  for (const test of tests) if (test(text)) return true;
  return false;
}

function agentIncludes(parts: string[], agent: string | undefined): boolean {
  if (!agent) return false;
  const lower = agent.toLowerCase();
  return parts.some((p) => lower.includes(p));
}

/** A value as new-api's gjson reads it: strings trimmed, numbers and booleans as text, objects as JSON. */
function text(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function walk(v: unknown, path: string[]): unknown {
  for (const p of path) {
    if (!v || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

/** nested_path: the value is itself JSON (Claude Code's user_id in its newer form); anything else gives no key. */
function nestedValue(v: unknown, nested: string[]): string {
  let doc = v;
  if (typeof v === 'string') {
    try {
      doc = JSON.parse(v);
    } catch {
      return '';
    }
  }
  return text(walk(doc, nested));
}

function sourceValue(s: RelayState, src: KeySource): string {
  let v: unknown;
  switch (src.type) {
    case 'request_header':
      v = header(s.req.headers, src.header);
      break;
    case 'gjson':
      v = walk(s.body, src.path);
      break;
    case 'context_int': {
      const n = contextInt(s, src.key);
      v = n > 0 ? n : undefined;
      break;
    }
    case 'context_string':
      v = contextString(s, src.key);
      break;
  }
  return src.nested ? nestedValue(v, src.nested) : text(v);
}

function header(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The keys of new-api's gin context a rule can name, as this gateway knows them. */
function contextInt(s: RelayState, key: string): number {
  if (key === 'id' || key === 'user_id') return s.caller.user.id;
  if (key === 'token_id') return s.caller.token?.id ?? 0;
  return 0;
}

function contextString(s: RelayState, key: string): string {
  switch (key) {
    case 'group':
    case 'using_group':
      return s.group;
    case 'user_group':
      return s.caller.user.group;
    case 'username':
      return s.caller.user.username;
    case 'token_name':
      return s.caller.token?.name ?? '';
    case 'original_model':
      return s.model;
    default:
      return '';
  }
}

/**
 * The remembered channel when the normal choice could have picked it, else null. A remembered channel that cannot be
 * taken (disabled, no longer serving the group and model, past its cap) is forgotten unless keep_on_channel_disabled.
 */
export function stickyChannel(s: RelayState, hit: AffinityHit): CachedChannel | null | Promise<CachedChannel | null> {
  const id = s.svc.affinity.store.get(hit.suffix);
  return typeof id === 'number' ? usable(s, hit, id) : id.then((n) => usable(s, hit, n));
}

function usable(s: RelayState, hit: AffinityHit, id: number): CachedChannel | null {
  if (!id) return null;
  let found: CachedChannel | null = null;
  for (const tier of s.svc.channels.tiers(s.group, s.model) ?? [])
    for (const c of tier.channels) if (c.id === id) found = c;
  if (found && usageLimits(s.ctx).cappedChannels().has(id)) found = null;
  if (found) {
    hit.used = true;
    return found;
  }
  if (!s.svc.affinity.setting.keepOnDisabled) void s.svc.affinity.store.delete(hit.suffix);
  return null;
}

/** After an answer: the channel that served it is remembered (or the first one routed, without switch_on_success). */
export function rememberAffinity(s: RelayState, hit: AffinityHit, answered: number): void {
  const a = s.svc.affinity.setting;
  if (!a.enabled) return;
  const id = a.switchOnSuccess ? answered : hit.first || answered;
  const done = s.svc.affinity.store.set(hit.suffix, id, hit.ttlSeconds);
  if (done) void done.catch((err) => s.ctx.log.warn({ err, reqId: s.req.id }, 'channel affinity not saved'));
}
