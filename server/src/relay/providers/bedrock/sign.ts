// SigV4 for Bedrock Runtime, done by AWS's own signer: the signature covers the method, the exact path and query
// sent, the host (with its port when not the default), x-amz-date, the session token, and the SHA-256 of the
// final body bytes, so the caller must send exactly the headers and body it signed.
// AWS's signer is loaded with the first signature: a gateway without Bedrock channels does not carry it
let signerModules: Promise<[typeof import('@smithy/signature-v4'), typeof import('@aws-crypto/sha256-js')]> | null =
  null;
const loadSigner = () =>
  (signerModules ??= Promise.all([import('@smithy/signature-v4'), import('@aws-crypto/sha256-js')]));
import type { BedrockCredentials } from './credentials.js';

export const BEDROCK_SIGNING_SERVICE = 'bedrock';

export interface RequestToSign {
  method: string;
  /** the full URL the request goes to */
  url: string;
  /** headers that must be signed too (content-type, accept); names in any case */
  headers: Record<string, string>;
  body: Buffer;
}

/** The full header set to send: the given headers plus host, x-amz-date, x-amz-content-sha256, authorization (and
 *  x-amz-security-token for temporary credentials). */
export async function signRequest(
  creds: BedrockCredentials,
  req: RequestToSign,
  signingDate: Date = new Date(),
): Promise<Record<string, string>> {
  const url = new URL(req.url);
  const [{ SignatureV4 }, { Sha256 }] = await loadSigner();
  const signer = new SignatureV4({
    credentials: {
      accessKeyId: creds.accessKeyId,
      secretAccessKey: creds.secretAccessKey,
      sessionToken: creds.sessionToken,
    },
    region: creds.region,
    service: BEDROCK_SIGNING_SERVICE,
    sha256: Sha256,
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = value;
  // url.host keeps a non-default port, which is what an HTTP client puts in the Host header it sends
  headers.host = url.host;
  const signed = await signer.sign(
    {
      method: req.method.toUpperCase(),
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: queryOf(url),
      headers,
      body: req.body,
    },
    { signingDate },
  );
  return signed.headers;
}

/** The query as the signer wants it: name → value, or name → values when repeated. */
export function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const prev = query[name];
    query[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return query;
}
