// The plumbing shared by the vendor mocks (mock-anthropic.ts, mock-gemini.ts): an HTTP server on 127.0.0.1 that
// records every request, hands it to a handler, counts responses the client abandoned, and small writers for JSON
// and SSE. The OpenAI mock (mock-upstream.ts) predates it and keeps its own copy.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RecordedRequest } from './mock-upstream.js';

export type { RecordedRequest };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type Handler = (req: RecordedRequest, res: http.ServerResponse) => Promise<void>;

export class RecordingServer {
  readonly requests: RecordedRequest[] = [];
  /** responses whose connection closed before they finished (the client or relay aborted them) */
  closedEarly = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    readonly port: number,
  ) {
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  static async start(handler: Handler): Promise<RecordingServer> {
    let self: RecordingServer | undefined;
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
        handler(rec, res).catch((err) => {
          // a bug in a mock must show in the test, not hang it
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(err?.stack ?? err));
        });
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    self = new RecordingServer(server, `http://127.0.0.1:${port}`, port);
    return self;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  contentType = 'application/json',
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': contentType, 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** Split `text` into about `count` pieces on word boundaries, keeping every character (joined they give `text`). */
export function splitText(text: string, count: number): string[] {
  const words = text.match(/\S+\s*/g) ?? [];
  const lead = text.match(/^\s*/)?.[0] ?? '';
  if (words.length === 0) return text ? [text] : [];
  const per = Math.max(1, Math.ceil(words.length / Math.max(1, count)));
  const pieces: string[] = [];
  for (let i = 0; i < words.length; i += per) pieces.push(words.slice(i, i + per).join(''));
  pieces[0] = lead + pieces[0];
  return pieces;
}

/** Split a string into `count` pieces of roughly equal length (for JSON fragments, which need not break on words). */
export function splitEvenly(text: string, count: number): string[] {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, count)));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

/** The deterministic token count both mocks use: whitespace-separated words, at least 1. */
export function countWords(...texts: string[]): number {
  let n = 0;
  for (const t of texts) n += (t.match(/\S+/g) ?? []).length;
  return Math.max(1, n);
}

/** The first `n` words of `text`. */
export function firstWords(text: string, n: number): string {
  return (text.match(/\S+/g) ?? []).slice(0, n).join(' ');
}

/** Arguments that satisfy the tool's schema: a city for location-like strings, simple placeholders otherwise. */
export function argumentsFor(schema: any): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries<any>(schema?.properties ?? {})) {
    if (prop?.enum?.length) out[key] = prop.enum[0];
    else if (prop?.type === 'number' || prop?.type === 'integer') out[key] = 1;
    else if (prop?.type === 'boolean') out[key] = true;
    else if (/location|city|place/i.test(key)) out[key] = 'Paris';
    else out[key] = 'mock';
  }
  return out;
}
