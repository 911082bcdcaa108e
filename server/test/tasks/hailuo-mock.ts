// A strict MiniMax video API on 127.0.0.1: every call needs `Authorization: Bearer <key>` of the key given (else
// `base_resp.status_code` 1004 in a 200, as MiniMax answers); `POST /v1/video_generation` takes MiniMax's fields only
// and answers `{task_id, base_resp: {status_code: 0}}`; `GET /v1/query/video_generation?task_id=` answers the state
// the test scripted (`code`: a base_resp error code in a 200; `http`: another status code).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HailuoCall {
  method: string;
  path: string;
  query: string;
  auth: string | undefined;
  body: any;
}

export interface HailuoState {
  status?: string;
  fileId?: string;
  code?: number;
  http?: number;
}

export interface HailuoMock {
  url: string;
  calls: HailuoCall[];
  states: Map<string, HailuoState>;
  close(): Promise<void>;
}

const FIELDS = new Set([
  'model',
  'prompt',
  'prompt_optimizer',
  'fast_pretreatment',
  'duration',
  'resolution',
  'callback_url',
  'aigc_watermark',
  'first_frame_image',
  'last_frame_image',
  'subject_reference',
]);

export async function startHailuoMock(key: string): Promise<HailuoMock> {
  let n = 0;
  const tasks = new Set<string>();
  const mock: HailuoMock = { url: '', calls: [], states: new Map(), close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const fail = (code: number, msg: string) => send(200, { base_resp: { status_code: code, status_msg: msg } });
      const [path, query = ''] = (req.url ?? '').split('?');
      const call: HailuoCall = { method: req.method ?? '', path, query, auth: req.headers.authorization, body: null };
      mock.calls.push(call);
      if (req.headers.authorization !== `Bearer ${key}`) return fail(1004, 'authorized error');
      if (req.method === 'POST' && path === '/v1/video_generation') {
        let body: any;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return fail(2013, 'invalid params');
        }
        call.body = body;
        const unknown = Object.keys(body).filter((k) => !FIELDS.has(k));
        if (unknown.length) return fail(2013, `invalid params, unknown ${unknown[0]}`);
        if (typeof body.model !== 'string' || !Number.isInteger(body.duration) || typeof body.resolution !== 'string')
          return fail(2013, 'invalid params');
        const id = `${106916112212 + ++n}`;
        tasks.add(id);
        return send(200, { task_id: id, base_resp: { status_code: 0, status_msg: 'success' } });
      }
      if (req.method === 'GET' && path === '/v1/query/video_generation') {
        const id = new URLSearchParams(query).get('task_id') ?? '';
        if (!tasks.has(id)) return fail(2013, 'task not found');
        const st = mock.states.get(id) ?? {};
        if (st.http && st.http !== 200) return send(st.http, { error: 'too many requests' });
        if (st.code) return fail(st.code, 'rate limit');
        return send(200, {
          task_id: id,
          status: st.status ?? 'Queueing',
          ...(st.fileId ? { file_id: st.fileId, video_width: 1366, video_height: 768 } : {}),
          base_resp: { status_code: 0, status_msg: 'success' },
        });
      }
      send(404, { base_resp: { status_code: 404, status_msg: `no route ${req.method} ${path}` } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () => new Promise<void>((r) => server.close(() => r()));
  return mock;
}
