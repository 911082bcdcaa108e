// A strict VolcEngine Ark content generation API on 127.0.0.1: every call needs `Authorization: Bearer <key>` of the
// key given; `POST /api/v3/contents/generations/tasks` takes Ark's task fields only, with a content list whose items
// are one text and media of Ark's types, and answers `{id: "cgt-…"}`; `GET …/tasks/{id}` answers the state the test
// scripted (a status code other than 200 answers Ark's error object), with the usage it scripted.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ArkCall {
  method: string;
  path: string;
  auth: string | undefined;
  body: any;
}

export interface ArkState {
  status?: string;
  url?: string;
  error?: string;
  http?: number;
  /** usage.total_tokens of the answer (108900 when not scripted) */
  totalTokens?: number;
}

export interface ArkMock {
  url: string;
  calls: ArkCall[];
  states: Map<string, ArkState>;
  close(): Promise<void>;
}

const FIELDS = new Set([
  'model',
  'content',
  'callback_url',
  'return_last_frame',
  'service_tier',
  'execution_expires_after',
  'generate_audio',
  'draft',
  'tools',
  'safety_identifier',
  'priority',
  'resolution',
  'ratio',
  'duration',
  'frames',
  'seed',
  'camera_fixed',
  'watermark',
]);
const MEDIA = new Set(['image_url', 'video_url', 'audio_url']);

export async function startArkMock(key: string): Promise<ArkMock> {
  let n = 0;
  const tasks = new Map<string, string>();
  const mock: ArkMock = { url: '', calls: [], states: new Map(), close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const fail = (status: number, code: string, message: string) => send(status, { error: { code, message } });
      const path = (req.url ?? '').split('?')[0];
      const call: ArkCall = { method: req.method ?? '', path, auth: req.headers.authorization, body: null };
      mock.calls.push(call);
      if (req.headers.authorization !== `Bearer ${key}`) return fail(401, 'AuthenticationError', 'invalid api key');
      if (req.method === 'POST' && path === '/api/v3/contents/generations/tasks') {
        let body: any;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return fail(400, 'InvalidParameter', 'invalid json');
        }
        call.body = body;
        const unknown = Object.keys(body).filter((k) => !FIELDS.has(k));
        if (unknown.length) return fail(400, 'InvalidParameter', `unknown field ${unknown[0]}`);
        if (typeof body.model !== 'string' || !Array.isArray(body.content))
          return fail(400, 'MissingParameter', 'model and content are required');
        const texts = body.content.filter((c: any) => c.type === 'text');
        if (texts.length !== 1 || typeof texts[0].text !== 'string')
          return fail(400, 'InvalidParameter', 'one text item');
        for (const c of body.content)
          if (c.type !== 'text' && (!MEDIA.has(c.type) || typeof c[c.type]?.url !== 'string'))
            return fail(400, 'InvalidParameter', `bad content item ${c.type}`);
        const id = `cgt-2026120700${++n}`;
        tasks.set(id, body.model);
        return send(200, { id });
      }
      const fetch = /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/.exec(path);
      if (req.method === 'GET' && fetch) {
        const model = tasks.get(fetch[1]);
        if (!model) return fail(404, 'ResourceNotFound', 'task not found');
        const st = mock.states.get(fetch[1]) ?? {};
        if (st.http && st.http !== 200) return fail(st.http, 'RateLimitExceeded', 'too many requests');
        return send(200, {
          id: fetch[1],
          model,
          status: st.status ?? 'queued',
          ...(st.url ? { content: { video_url: st.url } } : {}),
          ...(st.error ? { error: { code: 'OutputVideoSensitiveContentDetected', message: st.error } } : {}),
          usage: { completion_tokens: st.totalTokens ?? 108900, total_tokens: st.totalTokens ?? 108900 },
          created_at: 1765065600,
          updated_at: 1765065660,
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
