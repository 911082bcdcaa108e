// A fake OpenAI-compatible upstream on 127.0.0.1:<ephemeral> for relay tests. Every request is recorded; the reply
// is decided by `behave(req)` (default: an OpenAI chat answer, or an SSE stream when `stream:true`).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
  /** port of the mock that received it (tests that run several mocks) */
  port: number;
}

export interface UsageSpec {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

export interface StreamSpec {
  /** content pieces, one chunk each */
  pieces: string[];
  /** ms before the response headers */
  delayMs?: number;
  /** ms between chunks */
  intervalMs?: number;
  /** 'auto': a usage chunk only when the request asked include_usage; 'never'; 'always' */
  usage?: 'auto' | 'never' | 'always';
  usageValue?: UsageSpec;
  /** destroy the connection after this many content chunks (broken stream) */
  breakAfter?: number;
  /** stop sending (hang) after this many chunks, keeping the connection open */
  hangAfter?: number;
  /** send [DONE] at the end (default true) */
  done?: boolean;
}

export type Behaviour =
  | { kind: 'json'; status?: number; body: unknown; delayMs?: number; headers?: Record<string, string> }
  | { kind: 'raw'; status: number; body: string; contentType?: string }
  | { kind: 'stream'; spec: StreamSpec }
  | { kind: 'destroy' };

export const DEFAULT_USAGE: UsageSpec = { prompt_tokens: 11, completion_tokens: 7 };

export function usageJson(u: UsageSpec) {
  const out: Record<string, unknown> = {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
  };
  if (u.cached_tokens !== undefined) out.prompt_tokens_details = { cached_tokens: u.cached_tokens };
  return out;
}

export function chatCompletion(model: string, content: string, usage: UsageSpec | null = DEFAULT_USAGE) {
  const body: Record<string, unknown> = {
    id: 'chatcmpl-mock',
    object: 'chat.completion',
    created: 1700000000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  };
  if (usage) body.usage = usageJson(usage);
  return body;
}

export class MockUpstream {
  readonly requests: RecordedRequest[] = [];
  /** responses whose connection closed before they finished (the relay aborted them) */
  closedEarly = 0;
  behave: (req: RecordedRequest) => Behaviour = (req) => defaultBehaviour(req);
  private readonly sockets = new Set<import('node:net').Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    readonly port: number,
  ) {}

  static async start(): Promise<MockUpstream> {
    let self: MockUpstream | undefined;
    const server = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c) => parts.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(parts).toString('utf8');
        let body: any = null;
        try {
          body = raw ? JSON.parse(raw) : null;
        } catch {
          body = null;
        }
        const rec: RecordedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          raw,
          body,
          port: self!.port,
        };
        self!.requests.push(rec);
        res.on('close', () => {
          if (!res.writableFinished) self!.closedEarly++;
        });
        const b = self!.behave(rec);
        if (self!.held) void self!.held.then(() => respond(b, rec, res));
        else void respond(b, rec, res);
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    self = new MockUpstream(server, `http://127.0.0.1:${port}`, port);
    server.on('connection', (s) => {
      self!.sockets.add(s);
      s.on('close', () => self!.sockets.delete(s));
    });
    return self;
  }

  /** while set, answers wait for it (requests are still recorded as they arrive): see hold() */
  held: Promise<void> | null = null;

  /**
   * Holds every answer until the returned function is called, so requests are in flight together however fast the
   * gateway is (a concurrency test releases them once each request has arrived or been answered otherwise).
   */
  hold(): () => void {
    let release!: () => void;
    this.held = new Promise<void>((r) => (release = r));
    return () => {
      this.held = null;
      release();
    };
  }

  reset(): void {
    this.requests.length = 0;
    this.closedEarly = 0;
    this.behave = (req) => defaultBehaviour(req);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

export function defaultBehaviour(req: RecordedRequest): Behaviour {
  const model = req.body?.model ?? 'unknown';
  if (req.path.includes('embeddings')) {
    return {
      kind: 'json',
      body: {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
        model,
        usage: { prompt_tokens: 4, total_tokens: 4 },
      },
    };
  }
  if (req.path.endsWith('/models'))
    return {
      kind: 'json',
      body: {
        object: 'list',
        data: [
          { id: 'up-a', object: 'model' },
          { id: 'up-b', object: 'model' },
        ],
      },
    };
  if (req.path.includes('/completions') && !req.path.includes('chat')) {
    return {
      kind: 'json',
      body: {
        id: 'cmpl-mock',
        object: 'text_completion',
        model,
        choices: [{ index: 0, text: 'ok', finish_reason: 'stop' }],
        usage: usageJson(DEFAULT_USAGE),
      },
    };
  }
  if (req.body?.stream) return { kind: 'stream', spec: { pieces: ['Hello', ' world', '!'] } };
  return { kind: 'json', body: chatCompletion(model, 'Hello world!') };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function respond(b: Behaviour, req: RecordedRequest, res: http.ServerResponse): Promise<void> {
  if (b.kind === 'destroy') {
    res.socket?.destroy();
    return;
  }
  if (b.kind === 'raw') {
    res.writeHead(b.status, { 'content-type': b.contentType ?? 'text/plain' });
    res.end(b.body);
    return;
  }
  if (b.kind === 'json') {
    if (b.delayMs) await sleep(b.delayMs);
    const s = JSON.stringify(b.body);
    res.writeHead(b.status ?? 200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(s),
      ...b.headers,
    });
    res.end(s);
    return;
  }
  const spec = b.spec;
  const model = req.body?.model ?? 'unknown';
  if (spec.delayMs) await sleep(spec.delayMs);
  if (res.destroyed) return;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const asked = req.body?.stream_options?.include_usage === true;
  const withNull = asked; // OpenAI sends "usage":null on every chunk when include_usage is set
  const chunk = (delta: Record<string, unknown>, finish: string | null) => {
    const o: Record<string, unknown> = {
      id: 'chatcmpl-mock',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    };
    if (withNull) o.usage = null;
    return `data: ${JSON.stringify(o)}\n\n`;
  };
  res.write(chunk({ role: 'assistant', content: '' }, null));
  for (let i = 0; i < spec.pieces.length; i++) {
    if (spec.intervalMs) await sleep(spec.intervalMs);
    if (res.destroyed) return;
    if (spec.breakAfter !== undefined && i >= spec.breakAfter) {
      res.socket?.destroy();
      return;
    }
    if (spec.hangAfter !== undefined && i >= spec.hangAfter) return;
    res.write(chunk({ content: spec.pieces[i] }, null));
  }
  if (spec.intervalMs) await sleep(spec.intervalMs);
  if (res.destroyed) return;
  res.write(chunk({}, 'stop'));
  const mode = spec.usage ?? 'auto';
  if (mode === 'always' || (mode === 'auto' && asked)) {
    const u = spec.usageValue ?? DEFAULT_USAGE;
    res.write(
      `data: ${JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1700000000, model, choices: [], usage: usageJson(u) })}\n\n`,
    );
  }
  if (spec.done !== false) res.write('data: [DONE]\n\n');
  res.end();
}
