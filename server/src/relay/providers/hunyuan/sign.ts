// Tencent Cloud's TC3-HMAC-SHA256 signature (API 3.0), with node:crypto. Tencent's SDK (tencentcloud-sdk-nodejs-common)
// signs only inside its own client: its `Sign` class is marked @inner, is not exported from the package's index, and
// signs `content-type;host` only, while Hunyuan's calls here sign `x-tc-action` too. The signature covers the method,
// the path, the content type, the host, the action and the SHA-256 of the exact body bytes sent.
import { createHash, createHmac } from 'node:crypto';

export interface Tc3Request {
  /** the path (Hunyuan: `/`, or the base URL's path) */
  path: string;
  /** the Host header's value: host[:port] */
  host: string;
  contentType: string;
  action: string;
  body: Buffer;
  /** seconds */
  timestamp: number;
  service: string;
  secretId: string;
  secretKey: string;
}

const SIGNED_HEADERS = 'content-type;host;x-tc-action';

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** The UTC date of a timestamp, YYYY-MM-DD: the credential scope's (Tencent refuses one that is not the request's day). */
export function tc3Date(timestamp: number): string {
  return new Date(timestamp * 1000).toISOString().slice(0, 10);
}

/** The Authorization header's value for a POST. */
export function tc3Authorization(r: Tc3Request): string {
  // Tencent's canonical headers are lower case, names and values alike
  const canonicalHeaders =
    `content-type:${r.contentType.toLowerCase()}\n` +
    `host:${r.host.toLowerCase()}\n` +
    `x-tc-action:${r.action.toLowerCase()}\n`;
  const canonicalRequest = ['POST', r.path, '', canonicalHeaders, SIGNED_HEADERS, sha256Hex(r.body)].join('\n');
  const date = tc3Date(r.timestamp);
  const scope = `${date}/${r.service}/tc3_request`;
  const stringToSign = ['TC3-HMAC-SHA256', String(r.timestamp), scope, sha256Hex(canonicalRequest)].join('\n');
  const signing = hmac(hmac(hmac(`TC3${r.secretKey}`, date), r.service), 'tc3_request');
  const signature = createHmac('sha256', signing).update(stringToSign).digest('hex');
  return `TC3-HMAC-SHA256 Credential=${r.secretId}/${scope}, SignedHeaders=${SIGNED_HEADERS}, Signature=${signature}`;
}
