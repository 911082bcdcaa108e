// Pure settings logic: option ↔ form value conversion, change detection, JSON and domain checks, and the
// one-PUT-per-key save loop (spec §5 Settings, new-api-compat.md §3.4). No React here so it can be unit-tested
// directly.

export type Options = Record<string, string>;

export type FieldKind = 'switch' | 'number' | 'text' | 'textarea' | 'json' | 'secret' | 'select';

export interface FieldDef {
  key: string;
  kind: FieldKind;
  /** i18n key of the label (in the `setting` namespace). */
  label: string;
  /** i18n key of the help text under the field. */
  extra?: string;
  /** Extra text shown as a warning (orange). */
  warning?: string;
  placeholder?: string;
  min?: number;
  max?: number;
  step?: number;
  /** Select options: value → i18n key. */
  choices?: Array<{ value: string; label: string }>;
  /** Strip trailing slashes (server and payment addresses). */
  trimSlash?: boolean;
  /** Rows of a textarea / JSON editor. */
  rows?: number;
  /** Only shown (and validated, saved) while this switch is on. */
  visibleWhen?: string;
  /** Column span on wide screens (out of 24). */
  span?: number;
}

/**
 * Keys the option API never returns (new-api-compat.md §3.4): their fields start empty and save only when filled in.
 */
export function isSecretKey(key: string): boolean {
  return /(Token|Secret|Key)$/.test(key) || key === 'oidc.client_secret';
}

/** Pretty-prints JSON text for an editor; leaves text that does not parse as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** True when `text` is valid JSON (spec §5: 不是合法的 JSON 字符串 otherwise). Empty text is not JSON. */
export function isValidJson(text: string): boolean {
  if (typeof text !== 'string' || text.trim() === '') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** JSON texts equal once parsed (formatting changes are not changes). */
export function sameJson(a: string, b: string): boolean {
  try {
    return canonical(JSON.parse(a)) === canonical(JSON.parse(b));
  } catch {
    return a === b;
  }
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The form value for an option's stored string. */
export function toFormValue(field: FieldDef, stored: string | undefined): unknown {
  const v = stored ?? '';
  switch (field.kind) {
    case 'switch':
      return v === 'true';
    case 'number': {
      if (v.trim() === '') return null;
      const n = Number(v);
      return Number.isFinite(n) ? n : null;
    }
    case 'json':
      return prettyJson(v);
    case 'secret':
      return '';
    default:
      return v;
  }
}

/** The stored string for a form value (booleans as true/false, numbers as their decimal text). */
export function toOptionValue(field: FieldDef, value: unknown): string {
  if (field.kind === 'switch') return value ? 'true' : 'false';
  if (value === null || value === undefined) return '';
  if (field.kind === 'number') return typeof value === 'number' ? String(value) : String(value).trim();
  let s = String(value);
  if (field.kind === 'text' || field.kind === 'secret') s = s.trim();
  if (field.trimSlash) s = s.replace(/\/+$/, '');
  return s;
}

export function initialFormValues(fields: FieldDef[], options: Options): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f.key] = toFormValue(f, options[f.key]);
  return out;
}

export interface OptionChange {
  key: string;
  value: string;
}

/**
 * The options that differ from what the server holds. Secrets count only when filled in; JSON counts only when
 * its parsed value changed; fields hidden by their `visibleWhen` switch are left alone.
 */
export function collectChanges(fields: FieldDef[], options: Options, values: Record<string, unknown>): OptionChange[] {
  const changes: OptionChange[] = [];
  for (const f of fields) {
    if (f.visibleWhen && !values[f.visibleWhen]) continue;
    if (!(f.key in values)) continue;
    const next = toOptionValue(f, values[f.key]);
    if (f.kind === 'secret') {
      if (next !== '') changes.push({ key: f.key, value: next });
      continue;
    }
    const prev = options[f.key] ?? '';
    if (f.kind === 'json' ? sameJson(prev, next) : prev === next) continue;
    if (f.kind === 'number' && prev.trim() !== '' && Number(prev) === Number(next)) continue;
    changes.push({ key: f.key, value: next });
  }
  return orderChanges(changes);
}

/**
 * Booleans go last: the server refuses to turn a login method on before its credentials are stored
 * (new-api-compat.md §3.4), so credentials saved in the same section must land first.
 */
export function orderChanges(changes: OptionChange[]): OptionChange[] {
  const isToggle = (c: OptionChange) => c.value === 'true' || c.value === 'false';
  return [...changes.filter((c) => !isToggle(c)), ...changes.filter(isToggle)];
}

/** Keys of JSON fields whose text does not parse. */
export function invalidJsonKeys(fields: FieldDef[], values: Record<string, unknown>): string[] {
  return fields
    .filter((f) => f.kind === 'json' && !(f.visibleWhen && !values[f.visibleWhen]))
    .filter((f) => !isValidJson(String(values[f.key] ?? '')))
    .map((f) => f.key);
}

export interface SaveResult {
  saved: string[];
  failed: Array<{ key: string; message: string }>;
}

export type PutOption = (change: OptionChange) => Promise<{ success: boolean; message: string }>;

/** One PUT per changed option, in order; a thrown request counts as a failure with an empty message. */
export async function saveChanges(changes: OptionChange[], put: PutOption): Promise<SaveResult> {
  const result: SaveResult = { saved: [], failed: [] };
  for (const c of changes) {
    try {
      const res = await put(c);
      if (res.success) result.saved.push(c.key);
      else result.failed.push({ key: c.key, message: res.message });
    } catch {
      result.failed.push({ key: c.key, message: '' });
    }
  }
  return result;
}

export type SaveOutcome = 'nothing' | 'saved' | 'partial' | 'failed';

export function outcomeOf(result: SaveResult): SaveOutcome {
  if (result.saved.length === 0 && result.failed.length === 0) return 'nothing';
  if (result.failed.length === 0) return 'saved';
  return result.saved.length > 0 ? 'partial' : 'failed';
}

// ---- email domain whitelist ----

const DOMAIN_RE = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,}$/i;

export type DomainProblem = 'empty' | 'invalid' | 'duplicate';

/** Checks a domain before adding it to the whitelist; null when it may be added. */
export function checkDomain(domain: string, list: string[]): DomainProblem | null {
  const d = domain.trim().toLowerCase();
  if (d === '') return 'empty';
  if (!DOMAIN_RE.test(d)) return 'invalid';
  if (list.some((x) => x.trim().toLowerCase() === d)) return 'duplicate';
  return null;
}

export function parseWhitelist(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
}

// ---- OIDC ----

export function isHttpUrl(url: string): boolean {
  return /^https?:\/\/\S+$/i.test(url.trim());
}

export interface OidcEndpoints {
  authorization_endpoint: string;
  token_endpoint: string;
  user_info_endpoint: string;
}

/** Reads the three endpoints from a well-known document; null when any is missing. */
export function readOidcConfig(doc: unknown): OidcEndpoints | null {
  if (!doc || typeof doc !== 'object') return null;
  const d = doc as Record<string, unknown>;
  const pick = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : '');
  const out = {
    authorization_endpoint: pick('authorization_endpoint'),
    token_endpoint: pick('token_endpoint'),
    user_info_endpoint: pick('userinfo_endpoint'),
  };
  return out.authorization_endpoint && out.token_endpoint && out.user_info_endpoint ? out : null;
}
