// A mock OpenAI-compatible upstream for the non-chat relay modes. Unlike test/helpers/mock-upstream.ts it keeps the
// raw request bytes (multipart bodies must arrive unchanged) and can answer with binary audio or typed SSE events.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  json: any;
}

export type Handler = (req: Received, res: http.ServerResponse) => void | Promise<void>;

export class ModesUpstream {
  readonly requests: Received[] = [];
  handler: Handler = defaultHandler;
  private readonly sockets = new Set<import('node:net').Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<ModesUpstream> {
    let self: ModesUpstream | undefined;
    const server = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(parts);
        let json: any = null;
        if (String(req.headers['content-type'] ?? '').includes('json')) {
          try {
            json = JSON.parse(raw.toString('utf8'));
          } catch {
            json = null;
          }
        }
        const rec: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, json };
        self!.requests.push(rec);
        void self!.handler(rec, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    self = new ModesUpstream(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('connection', (s) => {
      self!.sockets.add(s);
      s.on('close', () => self!.sockets.delete(s));
    });
    return self;
  }

  reset(handler: Handler = defaultHandler): void {
    this.requests.length = 0;
    this.handler = handler;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

export function sendJson(res: http.ServerResponse, body: unknown, status = 200): void {
  const s = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
  res.end(s);
}

/** Deterministic fake audio bytes (every byte value, so any text re-encoding would show). */
export const AUDIO = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256));

export const IMAGE_RESPONSE = {
  created: 1700000000,
  data: [{ url: 'https://img.example/1.png', revised_prompt: 'a cat' }],
};

function defaultHandler(req: Received, res: http.ServerResponse): void {
  const p = req.path;
  if (p.endsWith('/moderations')) {
    return sendJson(res, {
      id: 'modr-1',
      model: req.json?.model,
      results: [{ flagged: false, categories: {}, category_scores: {} }],
    });
  }
  if (p.includes('/images/')) return sendJson(res, IMAGE_RESPONSE);
  if (p.endsWith('/audio/speech')) {
    // sent in several pieces, as a real TTS stream would
    res.writeHead(200, { 'content-type': 'audio/mpeg', 'x-request-id': 'req_tts_1', 'set-cookie': 'up=1' });
    res.write(AUDIO.subarray(0, 1000));
    setTimeout(() => {
      res.write(AUDIO.subarray(1000, 2000));
      res.end(AUDIO.subarray(2000));
    }, 20);
    return;
  }
  if (p.includes('/audio/')) return sendJson(res, { text: 'hello there, general kenobi' });
  if (p.endsWith('/rerank')) {
    return sendJson(res, {
      id: 'rr-1',
      results: [
        { index: 1, relevance_score: 0.9 },
        { index: 0, relevance_score: 0.1 },
      ],
      usage: { total_tokens: 42 },
    });
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: `no mock for ${p}`, type: 'invalid_request_error' } }));
}

export const RESP_USAGE = {
  input_tokens: 100,
  input_tokens_details: { cached_tokens: 40 },
  output_tokens: 20,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 120,
};

export function responseObject(model: string, status = 'completed', usage: unknown = RESP_USAGE) {
  return {
    id: 'resp_1',
    object: 'response',
    created_at: 1700000000,
    status,
    model,
    output: [
      status === 'completed'
        ? {
            type: 'message',
            id: 'msg_1',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: 'Hello world', annotations: [] }],
          }
        : { type: 'message', id: 'msg_1', status: 'in_progress', role: 'assistant', content: [] },
    ],
    usage: status === 'completed' ? usage : null,
  };
}

/** A Responses API event stream: created, text deltas, completed (with usage). */
export function responsesStream(model: string, usage: unknown = RESP_USAGE): Handler {
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const ev = (type: string, data: Record<string, unknown>, seq: number) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq, ...data })}\n\n`;
    res.write(ev('response.created', { response: responseObject(model, 'in_progress') }, 0));
    let seq = 1;
    for (const piece of ['Hello', ' world']) {
      await new Promise((r) => setTimeout(r, 5));
      res.write(
        ev('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: piece }, seq++),
      );
    }
    res.write(
      ev(
        'response.output_text.done',
        { item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Hello world' },
        seq++,
      ),
    );
    const final = responseObject(model, 'completed', usage);
    if (usage === null) final.usage = null;
    res.end(ev('response.completed', { response: final }, seq));
  };
}
