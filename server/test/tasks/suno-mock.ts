// A strict Suno API on 127.0.0.1 for the task tests: every call needs `Authorization: Bearer <key>`, answers are in
// Suno's {code, message, data} envelope, submits return ids up-1, up-2, …, and a fetch answers the states the test
// scripted (plus an id nobody asked for, which the gateway must ignore).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SunoCall {
  path: string;
  auth: string | undefined;
  body: any;
}

export interface SunoMock {
  url: string;
  calls: SunoCall[];
  /** upstream id → the item a fetch answers for it */
  states: Map<string, { status: string; fail_reason?: string; data?: unknown }>;
  /** the next submits are refused with this status and envelope */
  refuse: { status: number; code: string; message: string } | null;
  close(): Promise<void>;
}

export async function startSunoMock(key: string): Promise<SunoMock> {
  let n = 0;
  const mock: SunoMock = { url: '', calls: [], states: new Map(), refuse: null, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { code: 'invalid_json', message: 'body is not JSON', data: null });
      }
      const path = req.url ?? '';
      mock.calls.push({ path, auth: req.headers.authorization, body });
      if (req.method !== 'POST') return send(405, { code: 'method', message: 'POST only', data: null });
      if (req.headers.authorization !== `Bearer ${key}`)
        return send(401, { code: 'unauthorized', message: 'bad key', data: null });
      const submit = /^\/suno\/submit\/(music|lyrics)$/.exec(path);
      if (submit) {
        if (mock.refuse)
          return send(mock.refuse.status, { code: mock.refuse.code, message: mock.refuse.message, data: null });
        const id = `up-${++n}`;
        mock.states.set(id, { status: 'SUBMITTED' });
        return send(200, { code: 'success', message: '', data: id });
      }
      if (path === '/suno/fetch') {
        if (!Array.isArray(body?.ids)) return send(400, { code: 'invalid_ids', message: 'ids', data: null });
        const items = (body.ids as string[])
          .filter((id) => mock.states.has(id))
          .map((id) => ({ task_id: id, ...mock.states.get(id) }));
        items.push({ task_id: 'ghost-id', status: 'FAILURE', fail_reason: 'not yours' });
        return send(200, { code: 'success', message: '', data: items });
      }
      send(404, { code: 'not_found', message: path, data: null });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () => new Promise((r) => server.close(() => r()));
  return mock;
}
