// A strict mock of iFlytek Spark's websocket API on 127.0.0.1. The handshake's URL must be signed as iFlytek signs
// it: `authorization`, `date` and `host` in the query, the HMAC-SHA256 (APISecret) over `host`, `date` and the
// request line recomputed here, the host the one connected to, the date within 300 s; otherwise the upgrade is refused
// with iFlytek's HTTP 401/403 and `{"message": …}`. The one request frame must carry the APPID in `header.app_id`, the
// version's `domain` (v3.5 → generalv3.5) and text messages (a system message only first, then user and assistant
// alternating, ending with the user). It answers the recorded frames (relay/providers/spark/__fixtures__/answer.json)
// and closes; a message containing BLOCKED gets the recorded error frame (code 10013) instead.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';

const fixture = (file: string) =>
  readFileSync(new URL(`../../src/relay/providers/spark/__fixtures__/${file}`, import.meta.url), 'utf8');

const DOMAINS: Record<string, string> = {
  'v1.1': 'lite',
  'v2.1': 'generalv2',
  'v3.1': 'generalv3',
  'v3.5': 'generalv3.5',
  'v4.0': '4.0Ultra',
};

/** Spark's refusal of a request frame for a version, or null when it takes it. */
export function sparkFrameProblem(frame: any, version: string, appId?: string): string | null {
  if (!frame || typeof frame !== 'object') return 'frame is not JSON';
  if (typeof frame.header?.app_id !== 'string' || !frame.header.app_id) return 'header.app_id is required';
  if (appId !== undefined && frame.header.app_id !== appId) return 'app_id does not match the APIKey';
  if (frame.parameter?.chat?.domain !== DOMAINS[version])
    return `domain ${String(frame.parameter?.chat?.domain)} is not ${DOMAINS[version]} for ${version}`;
  const t = frame.parameter.chat.temperature;
  if (t !== undefined && !(t > 0 && t <= 1)) return 'temperature range is (0, 1]';
  const text = frame.payload?.message?.text;
  if (!Array.isArray(text) || text.length === 0) return 'payload.message.text is required';
  const rest = text[0]?.role === 'system' ? text.slice(1) : text;
  if (rest.length % 2 === 0) return 'the messages must end with the user';
  for (let i = 0; i < rest.length; i++) {
    if (rest[i]?.role !== (i % 2 === 0 ? 'user' : 'assistant')) return `text[${i}] has the wrong role`;
    if (typeof rest[i].content !== 'string' || !rest[i].content) return `text[${i}].content is empty`;
  }
  return null;
}

/** A request frame read back as OpenAI's chat body. */
export function sparkFrameAsOpenAI(frame: any): Record<string, unknown> {
  return { messages: frame.payload.message.text, temperature: frame.parameter.chat.temperature };
}

export interface SparkConnection {
  path: string;
  frame: any;
}

export class MockSpark {
  /** the connections that passed the handshake, with the request frame they sent */
  readonly connections: SparkConnection[] = [];
  /** handshakes refused, with the status */
  readonly refusals: number[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(appId: string, apiKey: string, apiSecret: string): Promise<MockSpark> {
    const server = http.createServer((_req, res) => res.writeHead(426).end());
    const wss = new WebSocketServer({ noServer: true });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const mock = new MockSpark(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('connection', (s: Socket) => {
      mock.sockets.add(s);
      s.on('close', () => mock.sockets.delete(s));
    });
    server.on('upgrade', (req, socket, head) => {
      const u = new URL(req.url ?? '/', 'http://mock');
      const refuse = (status: number, message: string) => {
        mock.refusals.push(status);
        const body = JSON.stringify({ message });
        socket.end(
          `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
      };
      const version = /^\/(v\d+\.\d+)\/chat$/.exec(u.pathname)?.[1];
      if (!version || !DOMAINS[version]) return refuse(404, 'no such API version');
      const q = u.searchParams;
      const date = q.get('date') ?? '';
      const host = q.get('host') ?? '';
      if (host !== req.headers.host) return refuse(401, 'HMAC signature cannot be verified: host mismatch');
      const at = Date.parse(date);
      if (!Number.isFinite(at) || Math.abs(at - Date.now()) > 300_000)
        return refuse(
          401,
          'HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication',
        );
      let auth = '';
      try {
        auth = Buffer.from(q.get('authorization') ?? '', 'base64').toString('utf8');
      } catch {
        auth = '';
      }
      const m =
        /^api_key="([^"]+)", algorithm="hmac-sha256", headers="host date request-line", signature="([^"]+)"$/.exec(
          auth,
        );
      if (!m) return refuse(401, 'HMAC signature cannot be verified');
      if (m[1] !== apiKey) return refuse(401, 'HMAC signature cannot be verified: unknown api_key');
      const expected = createHmac('sha256', apiSecret)
        .update(`host: ${host}\ndate: ${date}\nGET ${u.pathname} HTTP/1.1`)
        .digest('base64');
      if (m[2] !== expected) return refuse(403, 'HMAC signature does not match');
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.once('message', (data: Buffer) => {
          let frame: any = null;
          try {
            frame = JSON.parse(data.toString('utf8'));
          } catch {
            frame = null;
          }
          mock.connections.push({ path: u.pathname, frame });
          const problem = sparkFrameProblem(frame, version, appId);
          const sid = 'cht000b8f2e@dx193a4b5c6d7b8a2599';
          if (problem) {
            ws.send(JSON.stringify({ header: { code: 10163, message: problem, sid, status: 2 } }));
            return ws.close(1000);
          }
          const blocked = frame.payload.message.text.some((t: { content: string }) => t.content.includes('BLOCKED'));
          if (blocked) {
            ws.send(JSON.stringify(JSON.parse(fixture('error.json'))));
            return ws.close(1000);
          }
          for (const f of JSON.parse(fixture('answer.json'))) ws.send(JSON.stringify(f));
          ws.close(1000);
        });
      });
    });
    return mock;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}
