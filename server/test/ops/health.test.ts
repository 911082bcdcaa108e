// GET /healthz and GET /readyz: alive is alive; ready wants the database, Redis when configured, every migration
// recorded, and no shutdown under way. 503 names the check that failed.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { describeEachDb, REDIS_URL, redisAvailable } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { markShuttingDown, readiness } from '../../src/services/health.js';
import { addChannel, addToken, addUser, channelsChanged, relayPost, setOptions } from '../relay/fixtures.js';

async function get(s: TestServer, path: string) {
  const res = await fetch(`${s.url}${path}`);
  return { status: res.status, body: (await res.json()) as { status: string; checks?: Record<string, string> } };
}

const withRedis = await redisAvailable();

await describeEachDb('health and readiness', (kind) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ kind, env: withRedis ? { REDIS_CONN_STRING: REDIS_URL } : {} });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('answers /healthz and a ready /readyz with every check', async () => {
    expect(await get(s, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    const r = await get(s, '/readyz');
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ready');
    expect(r.body.checks).toEqual({
      database: 'ok',
      migrations: 'ok',
      shutdown: 'ok',
      ...(withRedis ? { redis: 'ok' } : {}),
    });
  });

  it('is not ready while a migration is missing', async () => {
    const last = (
      await sql<{ name: string }>`SELECT name, timestamp FROM kysely_migration ORDER BY name DESC`.execute(s.ctx.db)
    ).rows[0] as { name: string; timestamp: string };
    await sql`DELETE FROM kysely_migration WHERE name = ${last.name}`.execute(s.ctx.db);
    try {
      const r = await get(s, '/readyz');
      expect(r.status).toBe(503);
      expect(r.body.checks!.migrations).toBe(`pending: ${last.name}`);
      expect(r.body.checks!.database).toBe('ok');
    } finally {
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${last.name}, ${last.timestamp})`.execute(
        s.ctx.db,
      );
    }
    expect((await get(s, '/readyz')).status).toBe(200);
  });

  it('is not ready once the process is shutting down', async () => {
    markShuttingDown(s.ctx);
    const r = await get(s, '/readyz');
    expect(r.status).toBe(503);
    expect(r.body.checks!.shutdown).toBe('shutting down');
    expect((await get(s, '/healthz')).status).toBe(200);
  });

  it('is not ready when the database is closed', async () => {
    await s.ctx.db.destroy();
    const r = await get(s, '/readyz');
    expect(r.status).toBe(503);
    expect(r.body.status).toBe('not ready');
    expect(r.body.checks!.database).not.toBe('ok');
  });
});

await describeEachDb(
  'readiness during a stop',
  (kind) => {
    let s: TestServer;
    let up: MockUpstream;
    beforeAll(async () => {
      s = await startTestServer({ kind });
      up = await MockUpstream.start();
      await setOptions(s, { ModelRatio: { 'slow-m': 1 } });
      await addChannel(s, { baseUrl: up.url, models: ['slow-m'] });
      await channelsChanged(s);
    });
    afterAll(async () => {
      await s?.close();
      await up?.close();
    });

    it('turns not ready as soon as the stop begins, while a request still drains', async () => {
      const u = await addUser(s, { quota: 5_000_000 });
      const t = await addToken(s, u.id);
      up.behave = () => ({
        kind: 'json',
        delayMs: 600,
        body: { id: 'x', object: 'chat.completion', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } },
      });
      const pending = relayPost(s, '/v1/chat/completions', t.key, {
        model: 'slow-m',
        messages: [{ role: 'user', content: 'x' }],
      });
      await new Promise((r) => setTimeout(r, 150));
      expect((await readiness(s.ctx)).checks.shutdown).toBe('ok');
      const closing = s.close(5000);
      expect((await readiness(s.ctx)).checks.shutdown).toBe('shutting down');
      expect((await pending).status).toBe(200);
      await closing;
    });
  },
  ['postgres', 'mysql'],
);
