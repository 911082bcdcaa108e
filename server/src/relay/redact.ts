// One redactor per channel for the upstream text a client, a log line, a channel's disable reason or the console's
// channel test may show (an upstream that echoes the request's credentials must not hand them on). The secrets are
// the key in every form the relay derives from it: the raw key and each line of a multi-key channel, the pieces of a
// composite key (Bedrock `AK|SK|region[|token]`, Baidu-style `id|secret`) and their `user:password` pairings as
// Basic auth would carry them, a Vertex AI service account's private key, and whatever the adaptor put in the request
// it sent: the auth headers (Bearer tokens, Vertex's OAuth access token, SigV4's signature), a `key` query parameter.
// Built only when an error text is produced: the success path never pays for it.
import { redactor, type Redact } from '../lib/redact.js';

/** The request actually sent: its headers carry the tokens the adaptor derived from the key. */
export interface SentRequest {
  headers: Record<string, string>;
  path?: string;
}

// header names whose values are credentials (authorization, x-api-key, api-key, x-goog-api-key, x-amz-security-token…)
const SECRET_HEADER = /authorization|api-key|apikey|token|secret|signature/i;
// a Bedrock region is the third piece of its key but no secret, and error texts name it
const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
// the Vertex service account's fields that are secrets (the others name the account, project and endpoints)
const SERVICE_ACCOUNT_SECRETS = ['private_key', 'private_key_id', 'client_secret', 'refresh_token'];

/** The redactor of one channel's key, plus what was sent with it. */
export function channelRedactor(key: string, sent?: SentRequest): Redact {
  const secrets: string[] = [];
  for (const line of key.split('\n')) keySecrets(line.trim(), secrets);
  if (sent) sentSecrets(sent, secrets);
  return redactor(secrets);
}

function keySecrets(key: string, out: string[]): void {
  if (!key) return;
  out.push(key);
  if (key.startsWith('{')) return serviceAccountSecrets(key, out);
  const pieces = key
    .split('|')
    .map((p) => p.trim())
    .filter((p) => p && !AWS_REGION.test(p));
  if (pieces.length < 2) return;
  out.push(...pieces);
  // `id|secret` keys are sent as Basic `id:secret`; an echo of that header is base64 of the pair
  out.push(`${pieces[0]}:${pieces[1]}`);
}

function serviceAccountSecrets(json: string, out: string[]): void {
  let sa: Record<string, unknown>;
  try {
    sa = JSON.parse(json);
  } catch {
    return;
  }
  if (!sa || typeof sa !== 'object') return;
  for (const field of SERVICE_ACCOUNT_SECRETS) {
    const v = sa[field];
    if (typeof v !== 'string' || !v.trim()) continue;
    out.push(v, JSON.stringify(v).slice(1, -1));
    // a PEM's base64 lines, each of which an echo could carry on its own
    if (field === 'private_key') for (const line of v.split(/\r?\n/)) if (!line.startsWith('-----')) out.push(line);
  }
}

function sentSecrets(sent: SentRequest, out: string[]): void {
  for (const [name, value] of Object.entries(sent.headers)) {
    if (!SECRET_HEADER.test(name) || !value) continue;
    out.push(value);
    const scheme = /^(\S+)\s+(.+)$/.exec(value);
    if (!scheme) continue;
    if (/^AWS4-/.test(scheme[1])) {
      // SigV4: `Credential=AKID/date/region/service/aws4_request, SignedHeaders=…, Signature=hex`
      const signature = /Signature=([0-9a-f]+)/.exec(value);
      if (signature) out.push(signature[1]);
      continue;
    }
    out.push(scheme[2]);
    if (/^basic$/i.test(scheme[1])) out.push(...Buffer.from(scheme[2], 'base64').toString('utf8').split(':'));
  }
  const query = sent.path?.split('?')[1];
  if (query) for (const [name, value] of new URLSearchParams(query)) if (/key|token/i.test(name)) out.push(value);
}

/** A provider's error with the channel's secrets hidden in each of its texts. */
export function redactProviderError<
  E extends { message: string; type: string; code: string | number | null; param: string | null },
>(pe: E, redact: Redact): E {
  return {
    ...pe,
    message: redact(pe.message),
    type: redact(pe.type),
    code: typeof pe.code === 'string' ? redact(pe.code) : pe.code,
    param: pe.param === null ? null : redact(pe.param),
  };
}

/**
 * The redactor of one request, built at its first use: an attempt that succeeds never builds it. `sent` is read then,
 * so headers an adaptor's authorize added (a token, a signature) are included.
 */
export function lazyChannelRedactor(key: string, sent: SentRequest): Redact {
  let built: Redact | null = null;
  return (text) => (built ??= channelRedactor(key, sent))(text);
}
