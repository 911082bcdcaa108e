// Structured JSON logs: a relay request writes one access line (pino JSON) carrying its request id, the same id as
// the answer's X-Oneapi-Request-Id and as the request's other lines (here: a failed upstream call); RELAY_ACCESS_LOG=false
// turns the access line off.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { capturedLogger } from '../helpers/captured-log.js';
import { describeEachDb, type TestDbKind } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, relayPost, setOptions } from '../relay/fixtures.js';

async function serverWith(kind: TestDbKind, env: Record<string, string>) {
  const cap = capturedLogger();
  const s = await startTestServer({ kind, env, logger: cap.logger });
  const up = await MockUpstream.start();
  await setOptions(s, { ModelRatio: { 'log-m': 1, 'log-down': 1 }, RetryTimes: '0' });
  await addChannel(s, { baseUrl: up.url, models: ['log-m'] });
  // nothing listens there: the upstream call fails with a connection error
  await addChannel(s, { baseUrl: 'http://127.0.0.1:9', models: ['log-down'], autoBan: 0 });
  await channelsChanged(s);
  return { s, up, lines: cap.lines };
}

await describeEachDb(
  'relay logs',
  (kind) => {
    let on: Awaited<ReturnType<typeof serverWith>>;
    let off: Awaited<ReturnType<typeof serverWith>>;
    beforeAll(async () => {
      on = await serverWith(kind, {});
      off = await serverWith(kind, { RELAY_ACCESS_LOG: 'false' });
    });
    afterAll(async () => {
      for (const x of [on, off]) {
        await x?.s.close();
        await x?.up.close();
      }
    });

    const call = async (s: TestServer, model: string) => {
      const u = await addUser(s, { quota: 5_000_000 });
      const t = await addToken(s, u.id);
      const res = await relayPost(s, '/v1/chat/completions', t.key, {
        model,
        messages: [{ role: 'user', content: 'x' }],
      });
      await res.arrayBuffer();
      return { status: res.status, reqId: res.headers.get('x-oneapi-request-id')!, userId: u.id };
    };

    it('writes one JSON access line per relay request, with its request id', async () => {
      const r = await call(on.s, 'log-m');
      expect(r.status).toBe(200);
      const mine = on.lines.filter((l) => l.reqId === r.reqId);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        msg: 'relay request',
        level: 30,
        route: 'chat',
        status: 200,
        model: 'log-m',
        userId: r.userId,
        stream: false,
      });
      expect(mine[0].tokensIn).toBeGreaterThan(0);
    });

    it('puts the request id on every line of a failing request too', async () => {
      const r = await call(on.s, 'log-down');
      expect(r.status).toBeGreaterThanOrEqual(500);
      const mine = on.lines.filter((l) => l.reqId === r.reqId).map((l) => l.msg);
      expect(mine).toEqual(['upstream request failed', 'relay request']);
      // no line about this request without its id
      expect(on.lines.filter((l) => l.msg === 'upstream request failed' && !l.reqId)).toEqual([]);
    });

    it('writes no access line with RELAY_ACCESS_LOG=false', async () => {
      const r = await call(off.s, 'log-m');
      expect(r.status).toBe(200);
      expect(off.lines.filter((l) => l.msg === 'relay request')).toEqual([]);
    });
  },
  ['postgres', 'mysql'],
);
