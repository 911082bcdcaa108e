// A strict Jimeng (Volcengine visual) API on 127.0.0.1. Every call is `POST /?Action=…&Version=2022-08-31` whose
// Volcengine HMAC-SHA256 signature is recomputed here by hand from the documented algorithm (node:crypto only, never
// the vendor's library): the access key, the credential scope `{date}/cn-north-1/cv/request`, X-Date near now,
// X-Content-Sha256 equal to the SHA-256 of the exact body received, the canonical request over the signed headers and
// the sorted query. A wrong signature or hash answers Volcengine's gateway error (401 SignatureDoesNotMatch); an
// unknown Action or Version its InvalidActionOrVersion. CVSync2AsyncSubmitTask takes Jimeng's fields only and answers
// `{code: 10000, data: {task_id}}`; CVSync2AsyncGetResult `{req_key, task_id}` must name the req_key the task was
// submitted with, and answers the state the test scripted (`code`: Jimeng's error code in a 200; `http`: another
// status code).
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface JimengCall {
  action: string;
  version: string;
  accessKey: string;
  signedHeaders: string;
  body: any;
  /** false when the signature was refused */
  signed: boolean;
}

export interface JimengState {
  status?: string;
  url?: string;
  code?: number;
  http?: number;
}

export interface JimengMock {
  url: string;
  calls: JimengCall[];
  states: Map<string, JimengState>;
  /** the req_key each task was submitted with */
  reqKeys: Map<string, string>;
  close(): Promise<void>;
}

const VERSION = '2022-08-31';
const ACTIONS = new Set(['CVSync2AsyncSubmitTask', 'CVSync2AsyncGetResult']);
const FIELDS = new Set(['req_key', 'prompt', 'image_urls', 'binary_data_base64', 'seed', 'aspect_ratio', 'frames']);
const MAX_SKEW_MS = 15 * 60_000;

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 escaping, as Volcengine canonicalizes the query */
const escape = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The signature Volcengine computes for a request, or the reason it cannot be computed. */
function expectedSignature(
  req: http.IncomingMessage,
  body: Buffer,
  secret: string,
  auth: { scope: string[]; signedHeaders: string },
): string | { problem: string } {
  const xDate = String(req.headers['x-date'] ?? '');
  const m = /^(\d{8})T\d{6}Z$/.exec(xDate);
  if (!m) return { problem: 'X-Date is missing or malformed' };
  const iso = `${xDate.slice(0, 4)}-${xDate.slice(4, 6)}-${xDate.slice(6, 8)}T${xDate.slice(9, 11)}:${xDate.slice(11, 13)}:${xDate.slice(13, 15)}Z`;
  if (Math.abs(Date.parse(iso) - Date.now()) > MAX_SKEW_MS) return { problem: 'X-Date is too far from now' };
  const [date, region, service, terminator] = auth.scope;
  if (date !== m[1] || region !== 'cn-north-1' || service !== 'cv' || terminator !== 'request')
    return { problem: `bad credential scope ${auth.scope.join('/')}` };
  const bodyHash = sha256(body);
  if (req.headers['x-content-sha256'] !== bodyHash) return { problem: 'X-Content-Sha256 does not match the body' };
  const names = auth.signedHeaders.split(';');
  if (!names.includes('x-date') || !names.includes('x-content-sha256'))
    return { problem: 'X-Date and X-Content-Sha256 must be signed' };
  const u = new URL(req.url ?? '/', 'http://mock');
  const query = [...u.searchParams.entries()]
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([k, v]) => `${escape(k)}=${escape(v)}`)
    .join('&');
  const headers = names
    .map(
      (n) =>
        `${n}:${String(req.headers[n] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonical = [req.method, u.pathname, query, headers, auth.signedHeaders, bodyHash].join('\n');
  const scope = auth.scope.join('/');
  const toSign = ['HMAC-SHA256', xDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(secret, date), region), service), 'request');
  return createHmac('sha256', key).update(toSign).digest('hex');
}

export async function startJimengMock(accessKey: string, secretKey: string): Promise<JimengMock> {
  let n = 0;
  const mock: JimengMock = {
    url: '',
    calls: [],
    states: new Map(),
    reqKeys: new Map(),
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const u = new URL(req.url ?? '/', 'http://mock');
      const action = u.searchParams.get('Action') ?? '';
      const version = u.searchParams.get('Version') ?? '';
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const requestId = `2026120700000${++n}`;
      const gatewayError = (status: number, code: string, codeN: number, message: string) =>
        send(status, {
          ResponseMetadata: {
            RequestId: requestId,
            Action: action,
            Version: version,
            Service: 'cv',
            Region: 'cn-north-1',
            Error: { CodeN: codeN, Code: code, Message: message },
          },
        });
      const jimengError = (status: number, code: number, message: string) =>
        send(status, { code, data: null, message, request_id: requestId, status: code, time_elapsed: '1ms' });
      const authz = String(req.headers.authorization ?? '');
      const a = /^HMAC-SHA256 Credential=([^/]+)\/([^,]+), SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
        authz,
      );
      const call: JimengCall = {
        action,
        version,
        accessKey: a?.[1] ?? '',
        signedHeaders: a?.[3] ?? '',
        body: null,
        signed: false,
      };
      mock.calls.push(call);
      if (req.method !== 'POST' || u.pathname !== '/') return gatewayError(404, 'NotFound', 100001, 'not found');
      if (!ACTIONS.has(action) || version !== VERSION)
        return gatewayError(404, 'InvalidActionOrVersion', 100008, `Could not find operation ${action} ${version}`);
      if (!a) return gatewayError(401, 'MissingAuthenticationToken', 100009, 'missing or malformed Authorization');
      if (a[1] !== accessKey) return gatewayError(401, 'InvalidAccessKey', 100010, 'access key is invalid');
      const expected = expectedSignature(req, raw, secretKey, { scope: a[2].split('/'), signedHeaders: a[3] });
      if (typeof expected !== 'string') return gatewayError(401, 'SignatureDoesNotMatch', 100010, expected.problem);
      if (expected !== a[4])
        return gatewayError(
          401,
          'SignatureDoesNotMatch',
          100010,
          'The request signature we calculated does not match the signature you provided.',
        );
      call.signed = true;
      let body: any;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return jimengError(400, 50200, 'Invalid Request Body');
      }
      call.body = body;
      if (action === 'CVSync2AsyncSubmitTask') {
        const unknown = Object.keys(body).filter((k) => !FIELDS.has(k));
        if (unknown.length) return jimengError(400, 50200, `unknown field ${unknown[0]}`);
        if (typeof body.req_key !== 'string' || !body.req_key) return jimengError(400, 50200, 'req_key required');
        if (body.image_urls && body.binary_data_base64)
          return jimengError(400, 50200, 'image_urls and binary_data_base64 are exclusive');
        if (!body.prompt && !body.image_urls && !body.binary_data_base64)
          return jimengError(400, 50200, 'prompt or image required');
        if (body.frames !== undefined && body.frames !== 121 && body.frames !== 241)
          return jimengError(400, 50200, 'frames must be 121 or 241');
        const id = `73926163365196${String(++n).padStart(5, '0')}`;
        mock.reqKeys.set(id, body.req_key);
        return send(200, {
          code: 10000,
          data: { task_id: id },
          message: 'Success',
          request_id: requestId,
          status: 10000,
          time_elapsed: '120ms',
        });
      }
      // CVSync2AsyncGetResult
      if (Object.keys(body).some((k) => k !== 'req_key' && k !== 'task_id'))
        return jimengError(400, 50200, 'unknown field');
      const submitted = mock.reqKeys.get(String(body.task_id));
      if (submitted && body.req_key !== submitted) return jimengError(400, 50200, `req_key ${body.req_key} mismatch`);
      const st: JimengState = submitted ? (mock.states.get(body.task_id) ?? {}) : { status: 'not_found' };
      if (st.http && st.http !== 200) return jimengError(st.http, 50429, 'Request Has Reached API Limit');
      if (st.code && st.code !== 10000) return jimengError(200, st.code, 'Post Img Risk Not Pass');
      return send(200, {
        code: 10000,
        data: {
          binary_data_base64: [],
          image_urls: null,
          resp_data: '',
          status: st.status ?? 'in_queue',
          video_url: st.url ?? '',
        },
        message: 'Success',
        request_id: requestId,
        status: 10000,
        time_elapsed: '8ms',
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () => new Promise<void>((r) => server.close(() => r()));
  return mock;
}
