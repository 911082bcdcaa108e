// A strict Vidu API on 127.0.0.1: every call needs `Authorization: Token <key>` (a Bearer is refused);
// `POST /ent/v2/{text2video|img2video|start-end2video|reference2video}` takes Vidu's fields only, with the number of
// images its path asks for, and answers `{task_id, state: "created", …}`; `GET /ent/v2/tasks/{id}/creations` answers
// the state the test scripted (a status code other than 200 answers Vidu's error body).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ViduCall {
  method: string;
  path: string;
  auth: string | undefined;
  body: any;
}

export interface ViduState {
  state?: string;
  url?: string;
  errCode?: string;
  http?: number;
}

export interface ViduMock {
  url: string;
  calls: ViduCall[];
  states: Map<string, ViduState>;
  close(): Promise<void>;
}

const FIELDS = new Set([
  'model',
  'images',
  'prompt',
  'duration',
  'seed',
  'resolution',
  'movement_amplitude',
  'bgm',
  'payload',
  'callback_url',
]);
/** the images each path takes */
const IMAGES: Record<string, (n: number) => boolean> = {
  text2video: (n) => n === 0,
  img2video: (n) => n === 1,
  'start-end2video': (n) => n === 2,
  reference2video: (n) => n >= 1 && n <= 7,
};

export async function startViduMock(key: string): Promise<ViduMock> {
  let n = 0;
  const tasks = new Set<string>();
  const mock: ViduMock = { url: '', calls: [], states: new Map(), close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const fail = (status: number, reason: string) => send(status, { code: status, reason, message: reason });
      const path = (req.url ?? '').split('?')[0];
      const call: ViduCall = { method: req.method ?? '', path, auth: req.headers.authorization, body: null };
      mock.calls.push(call);
      if (req.headers.authorization !== `Token ${key}`) return fail(401, 'UnAuthorized');
      const submit = /^\/ent\/v2\/(text2video|img2video|start-end2video|reference2video)$/.exec(path);
      if (req.method === 'POST' && submit) {
        let body: any;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return fail(400, 'BadRequest');
        }
        call.body = body;
        const unknown = Object.keys(body).filter((k) => !FIELDS.has(k));
        if (unknown.length) return fail(400, `unknown field ${unknown[0]}`);
        if (typeof body.model !== 'string' || !Array.isArray(body.images))
          return fail(400, 'model and images required');
        if (!IMAGES[submit[1]](body.images.length)) return fail(400, 'ImageCountMismatch');
        if (!Number.isInteger(body.duration)) return fail(400, 'duration must be an integer');
        const id = `${880000 + ++n}`;
        tasks.add(id);
        return send(200, { task_id: id, state: 'created', model: body.model, created_at: '2026-12-07T00:00:00Z' });
      }
      const fetch = /^\/ent\/v2\/tasks\/([^/]+)\/creations$/.exec(path);
      if (req.method === 'GET' && fetch) {
        if (!tasks.has(fetch[1])) return fail(404, 'TaskNotFound');
        const st = mock.states.get(fetch[1]) ?? {};
        if (st.http && st.http !== 200) return fail(st.http, 'TooManyRequests');
        const state = st.state ?? 'queueing';
        return send(200, {
          id: fetch[1],
          state,
          err_code: st.errCode ?? '',
          credits: 20,
          creations: st.url ? [{ id: 'c1', url: st.url, cover_url: `${st.url}.jpg` }] : [],
        });
      }
      fail(404, `no route ${req.method} ${path}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () => new Promise<void>((r) => server.close(() => r()));
  return mock;
}
