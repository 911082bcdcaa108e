// A strict Kling video API on 127.0.0.1 for the Kling task tests. Every call needs `Authorization: Bearer <JWT>`
// verified with the secret of one of the `AccessKey|SecretKey` pairs given (HS256, header typ JWT, iss the access
// key, exp 1800 s and nbf 5 s around now) and `User-Agent: kling-sdk/1.0`, else Kling's 401; a plain relay key (no
// `|`) is accepted only on new-api's `/kling` paths. Submits are POST /v1/videos/{text2video|image2video} with
// Kling's payload (image2video needs an image, text2video takes none); a task is read on its own action's path,
// with the state the test scripted (a status code other than 200 answers Kling's error envelope).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, jwtVerify } from 'jose';

export interface KlingCall {
  method: string;
  path: string;
  auth: string | undefined;
  userAgent: string | undefined;
  /** the verified claims of the JWT (null for a relay key) */
  claims: Record<string, unknown> | null;
  body: any;
}

export interface KlingState {
  status: string;
  msg?: string;
  http?: number;
  url?: string;
  finalUnits?: string;
}

export interface KlingMock {
  url: string;
  calls: KlingCall[];
  /** upstream id → what a GET answers for it */
  states: Map<string, KlingState>;
  close(): Promise<void>;
}

export async function startKlingMock(pairs: string[], relayKeys: string[] = []): Promise<KlingMock> {
  let n = 0;
  const kinds = new Map<string, string>();
  const mock: KlingMock = { url: '', calls: [], states: new Map(), close: async () => undefined };
  const secrets = new Map(pairs.map((p) => p.split('|') as [string, string]));

  async function authorize(
    auth: string | undefined,
    relayPath: boolean,
  ): Promise<Record<string, unknown> | null | false> {
    const token = /^Bearer (.+)$/.exec(auth ?? '')?.[1];
    if (!token) return false;
    if (relayKeys.includes(token)) return relayPath ? null : false;
    if (relayPath) return false;
    try {
      const header = decodeProtectedHeader(token);
      if (header.alg !== 'HS256' || header.typ !== 'JWT') return false;
      const iss = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')).iss as string;
      const secret = secrets.get(iss);
      if (!secret) return false;
      const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ['HS256'] });
      const now = Math.floor(Date.now() / 1000);
      const exp = Number(payload.exp);
      const nbf = Number(payload.nbf);
      if (!(exp - now >= 1790 && exp - now <= 1800 && now - nbf >= 5 && now - nbf <= 15)) return false;
      return payload as Record<string, unknown>;
    } catch {
      return false;
    }
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        const fail = (status: number, code: number, message: string) =>
          send(status, { code, message, request_id: `req-${n}` });
        let path = (req.url ?? '').split('?')[0];
        const relayPath = path.startsWith('/kling/');
        if (relayPath) path = path.slice('/kling'.length);
        const call: KlingCall = {
          method: req.method ?? '',
          path: req.url ?? '',
          auth: req.headers.authorization,
          userAgent: req.headers['user-agent'],
          claims: null,
          body: null,
        };
        mock.calls.push(call);
        const claims = await authorize(req.headers.authorization, relayPath);
        if (claims === false) return fail(401, 1000, 'Authorization failed');
        call.claims = claims;
        if (req.headers['user-agent'] !== 'kling-sdk/1.0') return fail(400, 1200, 'unexpected user agent');
        const submit = /^\/v1\/videos\/(text2video|image2video)$/.exec(path);
        if (req.method === 'POST' && submit) {
          if (req.headers['content-type'] !== 'application/json') return fail(400, 1200, 'JSON only');
          let body: Record<string, unknown>;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return fail(400, 1200, 'body is not JSON');
          }
          call.body = body;
          if (typeof body.model_name !== 'string') return fail(400, 1201, 'model_name is required');
          if (!['5', '10'].includes(String(body.duration))) return fail(400, 1201, 'invalid duration');
          if (submit[1] === 'image2video' && typeof body.image !== 'string') return fail(400, 1201, 'image required');
          // Kling takes a URL or bare base64: a `data:` prefix is refused
          if (typeof body.image === 'string' && body.image.startsWith('data:'))
            return fail(400, 1201, 'image: base64 must not carry a data: prefix');
          if (submit[1] === 'text2video' && body.image !== undefined) return fail(400, 1201, 'no image here');
          const id = `kling_up_${++n}`;
          kinds.set(id, submit[1]);
          return send(200, {
            code: 0,
            message: 'SUCCEED',
            request_id: `req-${n}`,
            data: {
              task_id: id,
              task_status: 'submitted',
              created_at: 1_760_000_000_000,
              updated_at: 1_760_000_000_000,
            },
          });
        }
        const fetch = /^\/v1\/videos\/(text2video|image2video)\/([^/]+)$/.exec(path);
        if (req.method === 'GET' && fetch) {
          const id = fetch[2];
          if (kinds.get(id) !== fetch[1]) return fail(404, 1203, 'task not found');
          const st = mock.states.get(id) ?? { status: 'submitted' };
          if (st.http && st.http !== 200) return fail(st.http, st.http === 429 ? 1302 : 5000, 'scripted error');
          return send(200, {
            code: 0,
            message: 'SUCCEED',
            request_id: `req-${n}`,
            data: {
              task_id: id,
              task_status: st.status,
              task_status_msg: st.msg ?? '',
              ...(st.finalUnits ? { final_unit_deduction: st.finalUnits } : {}),
              task_result: st.url ? { videos: [{ id: 'v1', url: st.url, duration: '5' }] } : {},
              created_at: 1_760_000_000_000,
              updated_at: 1_760_000_100_000,
            },
          });
        }
        fail(404, 1203, `no route ${req.method} ${path}`);
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () => new Promise<void>((r) => server.close(() => r()));
  return mock;
}
