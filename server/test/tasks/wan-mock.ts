// A strict DashScope video synthesis API on 127.0.0.1: every call needs `Authorization: Bearer <key>` of the key given;
// `POST /api/v1/services/aigc/video-generation/video-synthesis` also needs `X-DashScope-Async: enable` (DashScope
// refuses a synchronous call to it) and takes {model, input, parameters} with DashScope's fields only, answering
// `{output: {task_id, task_status: "PENDING"}, request_id}`; `GET /api/v1/tasks/{id}` answers the state the test
// scripted (a status code other than 200 answers DashScope's error object).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WanCall {
  method: string;
  path: string;
  auth: string | undefined;
  async: string | undefined;
  body: any;
}

export interface WanState {
  status?: string;
  url?: string;
  message?: string;
  http?: number;
}

export interface WanMock {
  url: string;
  calls: WanCall[];
  states: Map<string, WanState>;
  close(): Promise<void>;
}

const INPUT = new Set([
  'prompt',
  'img_url',
  'first_frame_url',
  'last_frame_url',
  'audio_url',
  'negative_prompt',
  'template',
]);
const PARAMETERS = new Set(['resolution', 'size', 'duration', 'prompt_extend', 'watermark', 'audio', 'seed']);

export async function startWanMock(key: string): Promise<WanMock> {
  let n = 0;
  const tasks = new Set<string>();
  const mock: WanMock = { url: '', calls: [], states: new Map(), close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const fail = (status: number, code: string, message: string) =>
        send(status, { request_id: 'req-x', code, message });
      const path = (req.url ?? '').split('?')[0];
      const call: WanCall = {
        method: req.method ?? '',
        path,
        auth: req.headers.authorization,
        async: req.headers['x-dashscope-async'] as string | undefined,
        body: null,
      };
      mock.calls.push(call);
      if (req.headers.authorization !== `Bearer ${key}`) return fail(401, 'InvalidApiKey', 'Invalid API-key provided.');
      if (req.method === 'POST' && path === '/api/v1/services/aigc/video-generation/video-synthesis') {
        if (req.headers['x-dashscope-async'] !== 'enable')
          return fail(403, 'AccessDenied', 'current user api does not support synchronous calls');
        let body: any;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return fail(400, 'InvalidParameter', 'invalid json');
        }
        call.body = body;
        if (Object.keys(body).sort().join() !== 'input,model,parameters')
          return fail(400, 'InvalidParameter', 'unknown top-level field');
        const unknownInput = Object.keys(body.input ?? {}).filter((k) => !INPUT.has(k));
        const unknownParam = Object.keys(body.parameters ?? {}).filter((k) => !PARAMETERS.has(k));
        if (unknownInput.length || unknownParam.length)
          return fail(400, 'InvalidParameter', `unknown field ${[...unknownInput, ...unknownParam][0]}`);
        if (body.parameters.size && body.parameters.resolution)
          return fail(400, 'InvalidParameter', 'size and resolution are exclusive');
        const id = `0385dc79-5ff8-4d82-bcb6-${String(++n).padStart(12, '0')}`;
        tasks.add(id);
        return send(200, { output: { task_id: id, task_status: 'PENDING' }, request_id: `req-${n}` });
      }
      const fetch = /^\/api\/v1\/tasks\/([^/]+)$/.exec(path);
      if (req.method === 'GET' && fetch) {
        if (!tasks.has(fetch[1])) return fail(404, 'NotFound', 'task not found');
        const st = mock.states.get(fetch[1]) ?? {};
        if (st.http && st.http !== 200) return fail(st.http, 'Throttling.RateQuota', 'Requests rate limit exceeded');
        const status = st.status ?? 'PENDING';
        return send(200, {
          request_id: 'req-f',
          output: {
            task_id: fetch[1],
            task_status: status,
            ...(st.url ? { video_url: st.url } : {}),
            ...(st.message ? { code: 'DataInspectionFailed', message: st.message } : {}),
          },
          ...(status === 'SUCCEEDED' ? { usage: { duration: 5, video_count: 1 } } : {}),
        });
      }
      fail(404, 'NotFound', `no route ${req.method} ${path}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () => new Promise<void>((r) => server.close(() => r()));
  return mock;
}
