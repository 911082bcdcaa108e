// A strict OpenAI video API on 127.0.0.1 for the video task tests. Every call needs `Authorization: Bearer <key>` of
// one of the keys given; a create is JSON ({model, prompt, seconds as a string, size}, nothing else) or a multipart
// form whose boundary is the one its Content-Type names; answers are OpenAI's video objects (ids video_up_1, …) with
// the status and progress the test scripted; the content endpoint serves fixed bytes and honours `Range: bytes=a-b`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface VideoCall {
  method: string;
  path: string;
  auth: string | undefined;
  contentType: string | undefined;
  range: string | undefined;
  /** the JSON body, or the multipart form's text fields and files (name → bytes as latin1) */
  body: any;
  raw: Buffer;
}

export interface VideoMock {
  url: string;
  calls: VideoCall[];
  /** upstream id → what a GET answers for it (a status code other than 200 answers an OpenAI error) */
  states: Map<string, { status: string; progress?: number; error?: { code: string; message: string }; http?: number }>;
  /** the finished videos' bytes */
  content: Buffer;
  /** the content endpoint announces this length (and sends a few bytes) instead of the content's */
  announce: number | null;
  close(): Promise<void>;
}

const ALLOWED_JSON = new Set(['model', 'prompt', 'seconds', 'size', 'input_reference']);

function parseForm(raw: Buffer, contentType: string): Record<string, string> | null {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!m) return null;
  const boundary = m[1] ?? m[2];
  const text = raw.toString('latin1');
  if (!text.startsWith(`--${boundary}\r\n`) || !text.endsWith(`--${boundary}--\r\n`)) return null;
  const out: Record<string, string> = {};
  for (const part of text.split(`--${boundary}`).slice(1, -1)) {
    const [head, ...rest] = part.replace(/^\r\n/, '').split('\r\n\r\n');
    const name = /name="([^"]+)"/.exec(head)?.[1];
    if (name) out[name] = rest.join('\r\n\r\n').replace(/\r\n$/, '');
  }
  return out;
}

export async function startVideoMock(keys: string[]): Promise<VideoMock> {
  let n = 0;
  const videos = new Map<string, Record<string, unknown>>();
  const mock: VideoMock = {
    url: '',
    calls: [],
    states: new Map(),
    content: Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 251)),
    announce: null,
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const fail = (status: number, message: string, code: string | null = null) =>
        send(status, { error: { message, type: 'invalid_request_error', param: null, code } });
      const path = (req.url ?? '').split('?')[0];
      const contentType = req.headers['content-type'];
      const call: VideoCall = {
        method: req.method ?? '',
        path: req.url ?? '',
        auth: req.headers.authorization,
        contentType,
        range: req.headers.range,
        body: null,
        raw,
      };
      mock.calls.push(call);
      if (!keys.some((k) => req.headers.authorization === `Bearer ${k}`))
        return fail(401, 'Incorrect API key provided', 'invalid_api_key');
      const object = (id: string) => {
        const v = videos.get(id)!;
        const st = mock.states.get(id);
        return { ...v, status: st?.status ?? v.status, progress: st?.progress ?? 0, error: st?.error ?? null };
      };
      const created = (fields: Record<string, unknown>, remixedFrom: string | null) => {
        const id = `video_up_${++n}`;
        videos.set(id, {
          id,
          object: 'video',
          model: fields.model,
          status: 'queued',
          progress: 0,
          created_at: 1_760_000_000 + n,
          completed_at: null,
          expires_at: null,
          prompt: fields.prompt,
          seconds: fields.seconds,
          size: fields.size,
          remixed_from_video_id: remixedFrom,
          error: null,
        });
        send(200, object(id));
      };
      if (req.method === 'POST' && path === '/v1/videos') {
        if (/^multipart\/form-data/i.test(contentType ?? '')) {
          const form = parseForm(raw, contentType!);
          if (!form) return fail(400, 'malformed multipart body or boundary');
          call.body = form;
          if (!form.prompt) return fail(400, "Missing required parameter: 'prompt'.");
          return created({ model: form.model ?? 'sora-2', ...form }, null);
        }
        if (contentType !== 'application/json') return fail(400, `unsupported content type ${contentType}`);
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          return fail(400, 'body is not JSON');
        }
        call.body = body;
        const unknown = Object.keys(body).filter((k) => !ALLOWED_JSON.has(k));
        if (unknown.length) return fail(400, `Unknown parameter: '${unknown[0]}'.`);
        if (typeof body.prompt !== 'string') return fail(400, "Missing required parameter: 'prompt'.");
        if (body.seconds !== undefined && typeof body.seconds !== 'string')
          return fail(400, "Invalid type for 'seconds': expected a string.");
        return created(body, null);
      }
      const remix = /^\/v1\/videos\/([^/]+)\/remix$/.exec(path);
      if (req.method === 'POST' && remix) {
        const origin = videos.get(remix[1]);
        if (!origin) return fail(404, 'video not found');
        const body = JSON.parse(raw.toString('utf8') || '{}');
        call.body = body;
        if (Object.keys(body).join() !== 'prompt') return fail(400, 'remix takes a prompt only');
        return created({ ...origin, prompt: body.prompt }, remix[1]);
      }
      const content = /^\/v1\/videos\/([^/]+)\/content$/.exec(path);
      if (req.method === 'GET' && content) {
        if (mock.states.get(content[1])?.status !== 'completed') return fail(404, 'video not ready');
        if (mock.announce !== null) {
          res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(mock.announce) });
          res.write(mock.content);
          return void setImmediate(() => res.destroy());
        }
        const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
        if (range) {
          const start = Number(range[1]);
          const end = range[2] ? Math.min(Number(range[2]), mock.content.length - 1) : mock.content.length - 1;
          res.writeHead(206, {
            'content-type': 'video/mp4',
            'content-length': String(end - start + 1),
            'content-range': `bytes ${start}-${end}/${mock.content.length}`,
            'accept-ranges': 'bytes',
            'set-cookie': 'upstream=secret',
          });
          return res.end(mock.content.subarray(start, end + 1));
        }
        res.writeHead(200, {
          'content-type': 'video/mp4',
          'content-length': String(mock.content.length),
          'accept-ranges': 'bytes',
          'set-cookie': 'upstream=secret',
        });
        return res.end(mock.content);
      }
      const one = /^\/v1\/videos\/([^/]+)$/.exec(path);
      if (req.method === 'GET' && one) {
        if (!videos.has(one[1])) return fail(404, `Video with id '${one[1]}' not found.`);
        const st = mock.states.get(one[1]);
        if (st?.http && st.http !== 200)
          return fail(st.http, 'Rate limit reached', st.http === 429 ? 'rate_limit_exceeded' : null);
        return send(200, object(one[1]));
      }
      fail(404, `no route ${req.method} ${path}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () => new Promise<void>((r) => server.close(() => r()));
  return mock;
}
