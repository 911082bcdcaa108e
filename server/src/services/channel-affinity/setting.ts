// new-api's `channel_affinity_setting` (new-api-compat.md, "Channel affinity"): stored as new-api's config manager stores a registered
// struct, one `options` row per field (`channel_affinity_setting.enabled`, `….rules` as a JSON array, …), so a
// database written by new-api keeps its rules. The rules are compiled here once per change of those rows; the relay
// reads only the compiled form.

export const AFFINITY_PREFIX = 'channel_affinity_setting.';
export const RULES_KEY = 'channel_affinity_setting.rules';

/** A key source as new-api stores it: `context_int` | `context_string` | `request_header` | `gjson`. */
export interface KeySourceJson {
  type: string;
  key?: string;
  path?: string;
  nested_path?: string;
}

export interface RuleJson {
  name: string;
  model_regex: string[] | null;
  path_regex: string[] | null;
  user_agent_include?: string[] | null;
  key_sources: KeySourceJson[] | null;
  value_regex: string;
  ttl_seconds: number;
  /** kept as stored; not applied by this gateway (new-api-compat.md, "Channel affinity") */
  param_override_template?: Record<string, unknown> | null;
  skip_retry_on_failure: boolean;
  include_using_group: boolean;
  include_model_name: boolean;
  include_rule_name: boolean;
}

/** new-api's two default rules (Codex CLI's prompt_cache_key, Claude Code's session). */
export const DEFAULT_RULES: RuleJson[] = [
  {
    name: 'codex cli trace',
    model_regex: ['^gpt-.*$'],
    path_regex: ['/v1/responses'],
    key_sources: [{ type: 'gjson', path: 'prompt_cache_key' }],
    value_regex: '',
    ttl_seconds: 0,
    skip_retry_on_failure: true,
    include_using_group: true,
    include_model_name: false,
    include_rule_name: true,
  },
  {
    name: 'claude cli trace',
    model_regex: ['^claude-.*$'],
    path_regex: ['/v1/messages'],
    key_sources: [
      { type: 'request_header', key: 'X-Claude-Code-Session-Id' },
      { type: 'gjson', path: 'metadata.user_id' },
    ],
    value_regex: '',
    ttl_seconds: 0,
    skip_retry_on_failure: true,
    include_using_group: true,
    include_model_name: false,
    include_rule_name: true,
  },
];

/** The rows' defaults, as new-api's struct defaults serialise (options.ts merges them into the option table). */
export function affinityDefaults(): Record<string, string> {
  return {
    'channel_affinity_setting.enabled': 'true',
    'channel_affinity_setting.switch_on_success': 'true',
    'channel_affinity_setting.keep_on_channel_disabled': 'false',
    'channel_affinity_setting.max_entries': '100000',
    'channel_affinity_setting.default_ttl_seconds': '3600',
    [RULES_KEY]: JSON.stringify(DEFAULT_RULES),
  };
}

export type KeySource =
  | { type: 'context_int' | 'context_string'; key: string; nested: string[] | null; json: KeySourceJson }
  | { type: 'request_header'; header: string; nested: string[] | null; json: KeySourceJson }
  | { type: 'gjson'; path: string[]; nested: string[] | null; json: KeySourceJson };

/** A pattern as a test: a plain string compare when it has no regex syntax (the hot path's common case). */
export type TextTest = (text: string) => boolean;

export interface CompiledRule {
  name: string;
  models: TextTest[];
  paths: TextTest[];
  /** lower-cased substrings; empty: any user agent */
  agents: string[];
  sources: KeySource[];
  value: RegExp | null;
  ttlSeconds: number;
  skipRetry: boolean;
  includeGroup: boolean;
  includeModel: boolean;
  includeName: boolean;
}

export interface CompiledAffinity {
  enabled: boolean;
  switchOnSuccess: boolean;
  keepOnDisabled: boolean;
  maxEntries: number;
  defaultTtlSeconds: number;
  rules: CompiledRule[];
}

export class AffinityRuleError extends Error {}

/**
 * A Go (RE2) pattern as a JavaScript RegExp. The syntax they share is taken as is; RE2's leading flag group `(?i)`
 * (or `(?s)`, `(?m)`) becomes the RegExp's flags, since JavaScript has no inline flags.
 */
export function goRegExp(pattern: string): RegExp {
  let flags = '';
  let body = pattern;
  const m = /^\(\?([ims]+)\)/.exec(body);
  if (m) {
    flags = [...new Set(m[1])].join('');
    body = body.slice(m[0].length);
  }
  return new RegExp(body, flags);
}

function list(v: unknown, field: string, rule: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    throw new AffinityRuleError(`规则 ${rule} 的 ${field} 必须是字符串数组`);
  return v as string[];
}

function regexes(v: unknown, field: string, rule: string): RegExp[] {
  const out: RegExp[] = [];
  for (const p of list(v, field, rule)) {
    if (p === '') continue;
    try {
      out.push(goRegExp(p));
    } catch {
      throw new AffinityRuleError(`规则 ${rule} 的 ${field} 含有无效的正则表达式：${p}`);
    }
  }
  return out;
}

/**
 * Each pattern as a test. One without regex syntax but its anchors and a trailing `.*` (`/v1/messages`, `^claude-.*$`)
 * is a string compare, cheaper than a RegExp test, so a request no rule applies to costs a few compares; any other
 * pattern is its RegExp.
 */
function tests(v: unknown, field: string, rule: string): TextTest[] {
  const res = regexes(v, field, rule);
  return res.map((re) => {
    const m = re.flags === '' ? /^(\^?)([A-Za-z0-9/_-]+)(\.\*)?(\$?)$/.exec(re.source.replace(/\\\//g, '/')) : null;
    if (!m) return (text: string) => re.test(text);
    const [, start, lit, any, end] = m;
    if (start && end && !any) return (text: string) => text === lit;
    if (start) return (text: string) => text.startsWith(lit);
    if (end && !any) return (text: string) => text.endsWith(lit);
    return (text: string) => text.includes(lit);
  });
}

function dotted(path: string): string[] | null {
  const p = path.trim();
  return p ? p.split('.') : null;
}

function source(v: unknown, rule: string): KeySource {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new AffinityRuleError(`规则 ${rule} 的 key_sources 无效`);
  const s = v as KeySourceJson;
  const str = (x: unknown) => (typeof x === 'string' ? x.trim() : '');
  const nested = dotted(str(s.nested_path));
  switch (s.type) {
    case 'context_int':
    case 'context_string':
    case 'request_header':
      if (!str(s.key)) throw new AffinityRuleError(`规则 ${rule} 的 ${s.type} 来源缺少 key`);
      return s.type === 'request_header'
        ? { type: s.type, header: str(s.key).toLowerCase(), nested, json: s }
        : { type: s.type, key: str(s.key), nested, json: s };
    case 'gjson':
      if (!str(s.path)) throw new AffinityRuleError(`规则 ${rule} 的 gjson 来源缺少 path`);
      return { type: 'gjson', path: str(s.path).split('.'), nested, json: s };
    default:
      throw new AffinityRuleError(
        `规则 ${rule} 的 key_sources 类型无效：${String(s.type)}（可选 context_int、context_string、request_header、gjson）`,
      );
  }
}

function int(v: unknown, fallback: number): number {
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
}

/** The stored rules text compiled, or an AffinityRuleError saying what is wrong (the console's validation). */
export function compileRules(text: string): CompiledRule[] {
  let parsed: unknown;
  try {
    parsed = text.trim() === '' ? [] : JSON.parse(text);
  } catch {
    throw new AffinityRuleError(`${RULES_KEY} 不是合法的 JSON 字符串`);
  }
  if (parsed === null) return [];
  if (!Array.isArray(parsed)) throw new AffinityRuleError(`${RULES_KEY} 必须是规则数组`);
  return parsed.map((r, i) => {
    const n = i + 1;
    if (!r || typeof r !== 'object' || Array.isArray(r)) throw new AffinityRuleError(`第 ${n} 条规则不是对象`);
    const j = r as Partial<RuleJson>;
    const name = typeof j.name === 'string' ? j.name.trim() : '';
    const label = name || `#${n}`;
    const value =
      typeof j.value_regex === 'string' && j.value_regex ? regexes([j.value_regex], 'value_regex', label) : [];
    if (j.key_sources !== undefined && j.key_sources !== null && !Array.isArray(j.key_sources))
      throw new AffinityRuleError(`规则 ${label} 的 key_sources 必须是数组`);
    return {
      name,
      models: tests(j.model_regex, 'model_regex', label),
      paths: tests(j.path_regex, 'path_regex', label),
      agents: list(j.user_agent_include, 'user_agent_include', label)
        .map((a) => a.trim().toLowerCase())
        .filter(Boolean),
      sources: (j.key_sources ?? []).map((s) => source(s, label)),
      value: value[0] ?? null,
      ttlSeconds: int(j.ttl_seconds, 0),
      skipRetry: j.skip_retry_on_failure === true,
      includeGroup: j.include_using_group === true,
      includeModel: j.include_model_name === true,
      includeName: j.include_rule_name === true,
    };
  });
}

/**
 * The whole setting from the option rows. A stored rules text that does not compile (written by hand, or by new-api,
 * whose Go regexes JavaScript may not read) leaves no rule, as new-api leaves its previous rules when its JSON fails.
 */
export function compileSetting(get: (key: string) => string, onBadRules: (err: Error) => void): CompiledAffinity {
  let rules: CompiledRule[] = [];
  try {
    rules = compileRules(get(RULES_KEY));
  } catch (err) {
    onBadRules(err as Error);
  }
  const positive = (key: string, fallback: number) => {
    const n = int(get(AFFINITY_PREFIX + key), fallback);
    return n > 0 ? n : fallback;
  };
  return {
    enabled: get(AFFINITY_PREFIX + 'enabled') === 'true',
    switchOnSuccess: get(AFFINITY_PREFIX + 'switch_on_success') === 'true',
    keepOnDisabled: get(AFFINITY_PREFIX + 'keep_on_channel_disabled') === 'true',
    maxEntries: positive('max_entries', 100_000),
    defaultTtlSeconds: positive('default_ttl_seconds', 3600),
    rules,
  };
}

/** The console's check of one `channel_affinity_setting.*` value; null when it may be saved. */
export function affinityOptionProblem(key: string, value: string): string | null {
  if (key === RULES_KEY) {
    try {
      compileRules(value);
    } catch (err) {
      return (err as Error).message;
    }
    return null;
  }
  if (key === AFFINITY_PREFIX + 'max_entries' || key === AFFINITY_PREFIX + 'default_ttl_seconds') {
    if (!/^\d{1,9}$/.test(value.trim())) return `${key} 的值必须是非负整数`;
  }
  return null;
}
