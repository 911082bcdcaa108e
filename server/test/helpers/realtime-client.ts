// A realtime client as the official ones connect (test/relay/realtime*.test.ts): `ws` with the `openai` package's
// OpenAIRealtimeWS handshake (`Authorization: Bearer` + `OpenAI-Beta: realtime=v1`), or its browser client's
// subprotocols (`realtime, openai-insecure-api-key.<key>, openai-beta.realtime-v1`).
import WebSocket from 'ws';

export interface Client {
  ws: WebSocket;
  events: Array<{ type: string; [k: string]: any }>;
  /** resolves with the next event of `type` (already received ones count) */
  next(type: string, nth?: number): Promise<{ type: string; [k: string]: any }>;
  closed: Promise<number>;
}

/** Opens a realtime session as the official clients do; rejects with the HTTP status of a refused handshake. */
export function connect(base: string, model: string, key: string, byProtocols = false): Promise<Client> {
  const url = `${base.replace(/^http/, 'ws')}/v1/realtime?model=${encodeURIComponent(model)}`;
  const ws = byProtocols
    ? new WebSocket(url, ['realtime', `openai-insecure-api-key.sk-${key}`, 'openai-beta.realtime-v1'])
    : new WebSocket(url, { headers: { Authorization: `Bearer sk-${key}`, 'OpenAI-Beta': 'realtime=v1' } });
  const events: Client['events'] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (d: Buffer) => {
    events.push(JSON.parse(d.toString('utf8')));
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<number>((r) => ws.once('close', (code: number) => r(code)));
  const next = (type: string, nth = 1) =>
    new Promise<Client['events'][number]>((resolve) => {
      const look = () => {
        const hits = events.filter((e) => e.type === type);
        if (hits.length >= nth) return resolve(hits[nth - 1]);
        waiters.push(look);
      };
      look();
    });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, events, next, closed }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => reject(Object.assign(new Error(body), { status: res.statusCode })));
    });
    ws.once('error', reject);
  });
}

export const send = (c: Client, ev: Record<string, unknown>) => c.ws.send(JSON.stringify(ev));
