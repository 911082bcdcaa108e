// Checks of the fields whose format a vendor fixes (Anthropic 14, Gemini 24, Bedrock 33, Vertex AI 41), so the
// drawer says what is wrong before the channel is saved, or before the relay first fails with it. They mirror what
// the relay's providers accept (server/src/relay/providers/bedrock/credentials.ts, vertex/credentials.ts,
// vertex/region.ts). Errors are i18n keys of the `channel` namespace with their values.

export interface FieldError {
  error: string;
  params?: Record<string, string>;
}

const ANTHROPIC_API = 'https://api.anthropic.com';
const GEMINI_API = 'https://generativelanguage.googleapis.com';

// AWS regions look like us-east-1, ap-southeast-2, us-gov-west-1.
const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
// A Vertex AI location: `global`, or like us-central1, europe-west4.
const VERTEX_LOCATION = /^(global|[a-z]+(-[a-z]+)*\d+)$/;
const SERVICE_ACCOUNT_FIELDS = ['project_id', 'private_key_id', 'private_key', 'client_email'] as const;

const keyLines = (key: string) =>
  key
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/**
 * Whether the channel calls the vendor's own API: only there does the key's prefix say anything (a proxy in front
 * of it may hand out keys of any shape).
 */
function callsVendorApi(baseUrl: string, vendorApi: string): boolean {
  const base = baseUrl.trim().replace(/\/+$/, '');
  return base === '' || base === vendorApi;
}

/** `AccessKeyId|SecretAccessKey|region`, or with `|SessionToken` for temporary credentials. */
export function checkBedrockKey(line: string): FieldError | null {
  const parts = line.split('|').map((p) => p.trim());
  if (parts.length < 3 || parts.length > 4 || parts.some((p) => p === '')) return { error: 'err.bedrockKey' };
  if (!AWS_REGION.test(parts[2]!)) return { error: 'err.bedrockRegion', params: { region: parts[2]! } };
  return null;
}

/** The service-account JSON key file Google Cloud issues. */
export function checkServiceAccount(key: string): FieldError | null {
  let json: unknown;
  try {
    json = JSON.parse(key);
  } catch {
    return { error: 'err.vertexKey' };
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) return { error: 'err.vertexKey' };
  const sa = json as Record<string, unknown>;
  if (sa.type !== undefined && sa.type !== 'service_account') return { error: 'err.vertexKey' };
  const missing = SERVICE_ACCOUNT_FIELDS.filter((f) => typeof sa[f] !== 'string' || (sa[f] as string).trim() === '');
  if (missing.length) return { error: 'err.vertexKeyFields', params: { fields: missing.join(', ') } };
  return null;
}

/** One region for every model, or a JSON object of model → region with a `default`. */
export function checkVertexRegion(other: string): FieldError | null {
  const text = other.trim();
  if (text === '') return { error: 'err.vertexRegion' };
  if (!text.startsWith('{')) {
    return VERTEX_LOCATION.test(text) ? null : { error: 'err.vertexLocation', params: { region: text } };
  }
  let map: unknown;
  try {
    map = JSON.parse(text);
  } catch {
    return { error: 'err.vertexRegionJson' };
  }
  if (!map || typeof map !== 'object' || Array.isArray(map) || !('default' in map)) {
    return { error: 'err.vertexRegionJson' };
  }
  for (const region of Object.values(map as Record<string, unknown>)) {
    if (typeof region !== 'string' || !VERTEX_LOCATION.test(region.trim())) {
      return { error: 'err.vertexLocation', params: { region: String(region) } };
    }
  }
  return null;
}

/**
 * The vendor-specific checks of a channel form. An empty key is not checked (on edit it keeps the stored one; on
 * create the common rule already refused it).
 */
export function checkVendorFields(type: number, key: string, baseUrl: string, other: string): FieldError | null {
  const lines = keyLines(key);
  switch (type) {
    case 14:
      if (callsVendorApi(baseUrl, ANTHROPIC_API) && lines.some((l) => !l.startsWith('sk-ant-')))
        return { error: 'err.anthropicKey' };
      return null;
    case 24:
      if (callsVendorApi(baseUrl, GEMINI_API) && lines.some((l) => !l.startsWith('AIza')))
        return { error: 'err.geminiKey' };
      return null;
    case 33:
      for (const line of lines) {
        const problem = checkBedrockKey(line);
        if (problem) return problem;
      }
      return null;
    case 41:
      return checkVertexRegion(other) ?? (key.trim() ? checkServiceAccount(key.trim()) : null);
    default:
      return null;
  }
}
