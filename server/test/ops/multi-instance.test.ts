// Several instances of one deployment (issue 35): two real gateway processes, a master and a slave, over one
// PostgreSQL (and once over MariaDB) database and one Redis, with traffic on both. Each check holds across the two:
// no overdraft of one user's quota, a token disabled on one refused on the other at its next request, an option saved
// on one applied by the other, one rate limit for both, a slave that neither migrates nor runs the background jobs,
// and an instance killed mid-stream whose reservations are given back when it starts again, charges kept.
// Each database kind gets its own Redis database (the processes write unprefixed keys, and the user ids of the two
// runs are the same): REDIS_DB below, flushed before and after.
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { Redis } from 'ioredis';
import {
  createTestDatabase,
  describeEachDb,
  redisAvailable,
  REDIS_URL,
  type TestDatabase,
  type TestDbKind,
} from '../helpers/databases.js';
import { chatCompletion, MockUpstream, type RecordedRequest } from '../helpers/mock-upstream.js';
import { spawnGateway, type GatewayProcess } from '../helpers/process.js';
import { startTestServer } from '../helpers/server.js';
import { openDatabase, type Db } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';
import { readHolds } from '../../src/services/quota-holds.js';
import { addChannel, addToken, addUser, key48, setOptions } from '../relay/fixtures.js';

const MODEL = 'multi-model';
/** a process start (tsx compiles the sources) takes seconds, many on a loaded machine */
const PROCESS_TEST_MS = 90_000;
const REDIS_DB = { sqlite: 0, postgres: 13, mysql: 14 } as const;
/** access tokens are 32 characters (users.access_token is char(32)) */
const accessToken = () => key48().slice(0, 32);
const ROOT_ACCESS = accessToken();
const redisUp = await redisAvailable();

function redisUrl(db: number): string {
  const u = new URL(REDIS_URL);
  u.pathname = `/${db}`;
  return u.toString();
}

/**
 * The upstream: `max_tokens` picks the completion it reports (the charge; never more than the reservation), `slow:<ms>`
 * in the message delays a JSON answer, and a stream sends a piece every 150 ms (`pieces:<n>`, default 3).
 */
function answer(req: RecordedRequest) {
  const text = String(req.body?.messages?.[0]?.content ?? '');
  const slow = Number(/slow:(\d+)/.exec(text)?.[1] ?? 0);
  const usage = { prompt_tokens: 1, completion_tokens: Number(req.body?.max_tokens ?? 20) / 2 };
  if (req.body?.stream) {
    const n = Number(/pieces:(\d+)/.exec(text)?.[1] ?? 3);
    return {
      kind: 'stream' as const,
      spec: {
        pieces: Array.from({ length: n }, () => 'x'),
        intervalMs: 150,
        usage: 'always' as const,
        usageValue: usage,
      },
    };
  }
  return { kind: 'json' as const, body: chatCompletion(req.body?.model, 'ok', usage), delayMs: slow };
}

async function waitFor(cond: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not met in time');
}

const exited = (gw: GatewayProcess) => gw.child.exitCode !== null || gw.child.signalCode !== null;

const body = (kind: TestDbKind) => {
  let database: TestDatabase;
  let upstream: MockUpstream;
  let observer: Db;
  let db: Kysely<Database>;
  let redis: Redis;
  let master: GatewayProcess;
  let slave: GatewayProcess;
  let rootId = 0;
  const users: Record<string, { id: number; access: string; token: { id: number; key: string } }> = {};
  const env = () => ({ REDIS_CONN_STRING: redisUrl(REDIS_DB[kind]), CHANNEL_TEST_FREQUENCY: '1' });
  const startSlave = () => spawnGateway(database, { ...env(), NODE_TYPE: 'slave' });

  beforeAll(async () => {
    redis = new Redis(redisUrl(REDIS_DB[kind]));
    await redis.flushdb();
    upstream = await MockUpstream.start();
    upstream.behave = answer;
    database = await createTestDatabase(kind);
  });

  afterAll(async () => {
    for (const gw of [master, slave]) if (gw && !exited(gw)) gw.child.kill('SIGKILL');
    await observer?.close();
    await database?.drop();
    await upstream?.close();
    await redis?.flushdb();
    redis?.disconnect();
  });

  it('a slave on a database nobody migrated runs no migration: it refuses to start and creates no table', async () => {
    // in this process: a gateway process stops the same way, `cannot start: <the error>` and exit code 1
    const refused = await startTestServer({ database, env: { NODE_TYPE: 'slave' } }).then(
      async (s) => {
        await s.close();
        return 'started';
      },
      (err: Error) => err.message,
    );
    expect(refused).not.toBe('started');
    observer = await openDatabase({ dsn: database.dsn, sqlitePath: '', poolSize: 4 });
    db = observer.db;
    const tables =
      kind === 'postgres'
        ? await db
            .selectFrom('information_schema.tables' as never)
            .select('table_name' as never)
            .where('table_schema' as never, '=', 'public' as never)
            .execute()
        : await db
            .selectFrom('information_schema.tables' as never)
            .select('table_name' as never)
            .where('table_schema' as never, '=', database.dsn.split('/').pop()!.split('?')[0] as never)
            .execute();
    expect(tables).toEqual([]);
  });

  it(
    'the master schedules the background jobs; the slave neither schedules them nor migrates',
    async () => {
      // the data first, through a server that migrates the database (it stops before the two start)
      const seed = await startTestServer({ database });
      await setOptions(seed, { ModelRatio: { [MODEL]: 1 }, CompletionRatio: { [MODEL]: 1 } });
      await addChannel(seed, { baseUrl: upstream.url, models: [MODEL] });
      rootId = (await addUser(seed, { role: 100, quota: 0 })).id;
      await seed.ctx.db.updateTable('users').set({ access_token: ROOT_ACCESS }).where('id', '=', rootId).execute();
      const quotas = { overdraft: 1_000, toggled: 1_000_000, priced: 1_000_000, limited: 1_000_000, killed: 1_000_000 };
      for (const [name, quota] of Object.entries(quotas)) {
        const u = await addUser(seed, { quota });
        const access = accessToken();
        await seed.ctx.db.updateTable('users').set({ access_token: access }).where('id', '=', u.id).execute();
        const token = await addToken(seed, u.id, { unlimited: false, remain: quota });
        users[name] = { id: u.id, access, token };
      }
      await seed.close();
      const migrations = async () =>
        (
          await db
            .selectFrom('kysely_migration' as never)
            .selectAll()
            .execute()
        ).length;
      const applied = await migrations();
      expect(applied).toBeGreaterThan(0);

      [master, slave] = await Promise.all([spawnGateway(database, env()), startSlave()]);
      expect(master.output()).toContain('automatic channel tests scheduled');
      expect(slave.output()).not.toContain('automatic channel tests scheduled');
      expect(slave.output()).not.toContain('database migrated');
      expect(await migrations()).toBe(applied);
    },
    PROCESS_TEST_MS,
  );

  const call = (gw: GatewayProcess, key: string, body: Record<string, unknown> = {}) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }], ...body }),
    });
  const status = async (gw: GatewayProcess, key: string, body?: Record<string, unknown>) => {
    const res = await call(gw, key, body);
    await res.arrayBuffer();
    return res.status;
  };
  const consumeLogs = async (userId: number) =>
    (
      await db
        .selectFrom('logs')
        .select(['quota'])
        .where('user_id', '=', userId)
        .where('type', '=', 2)
        .orderBy('id')
        .execute()
    ).map((r) => Number(r.quota));
  const userOf = (id: number) =>
    db.selectFrom('users').select(['quota', 'used_quota']).where('id', '=', id).executeTakeFirstOrThrow();
  const remainOf = async (id: number) =>
    Number(
      (await db.selectFrom('tokens').select('remain_quota').where('id', '=', id).executeTakeFirstOrThrow())
        .remain_quota,
    );
  const consoleApi =
    (gw: GatewayProcess, access: string, userId: number) => (method: string, path: string, body: unknown) =>
      fetch(`${gw.url}${path}`, {
        method,
        headers: { authorization: access, 'New-Api-User': String(userId), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<{ success: boolean; message: string }>);

  /** waits until the instance's option store holds the value (its GET /api/option/, as root) */
  const applied = (gw: GatewayProcess, key: string, value: string) =>
    waitFor(async () => {
      const res = await fetch(`${gw.url}/api/option/`, {
        headers: { authorization: ROOT_ACCESS, 'New-Api-User': String(rootId) },
      });
      const body = (await res.json()) as { data: Array<{ key: string; value: string }> };
      return body.data.some((o) => o.key === key && o.value === value);
    }, 5_000);

  it(
    'lets no user overdraw: concurrent calls on both instances are charged at most the quota, each logged once',
    async () => {
      const u = users.overdraft;
      // each call reserves more than 20 and is charged 11 (1 prompt + max_tokens / 2): ~45 fit in 1 000
      const calls = Array.from({ length: 120 }, (_, i) =>
        status(i % 2 ? master : slave, u.token.key, { messages: [{ role: 'user', content: 'hi slow:150' }] }),
      );
      const statuses = await Promise.all(calls);
      const answered = statuses.filter((s) => s === 200).length;
      expect(answered).toBeGreaterThan(0);
      expect(statuses.filter((s) => s !== 200).length).toBeGreaterThan(0);
      await waitFor(async () => (await consumeLogs(u.id)).length >= answered);
      await new Promise((r) => setTimeout(r, 200));
      const logs = await consumeLogs(u.id);
      const charged = logs.reduce((a, b) => a + b, 0);
      const row = await userOf(u.id);
      expect(logs.length).toBe(answered);
      expect(charged).toBeLessThanOrEqual(1_000);
      expect(Number(row.quota)).toBeGreaterThanOrEqual(0);
      expect(Number(row.quota) + charged).toBe(1_000);
      expect(Number(row.quota) + Number(row.used_quota)).toBe(1_000);
      expect((await remainOf(u.token.id)) + charged).toBe(1_000);
      expect(await readHolds(db, { userId: u.id })).toEqual([]);
    },
    PROCESS_TEST_MS,
  );

  it('refuses a token disabled on one instance at the next request on the other', async () => {
    const u = users.toggled;
    expect(await status(slave, u.token.key)).toBe(200); // the slave has the token cached now
    const res = await consoleApi(master, u.access, u.id)('PUT', '/api/token/?status_only=true', {
      id: u.token.id,
      status: 2,
    });
    expect(res.success).toBe(true);
    expect(await status(slave, u.token.key)).toBe(401);
    await consoleApi(slave, u.access, u.id)('PUT', '/api/token/?status_only=true', { id: u.token.id, status: 1 });
    expect(await status(master, u.token.key)).toBe(200);
  });

  it('applies an option saved on one instance on the other', async () => {
    const u = users.priced;
    expect(await status(slave, u.token.key)).toBe(200);
    const root = consoleApi(master, ROOT_ACCESS, rootId);
    expect(
      (await root('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify({ [MODEL]: 3 }) })).success,
    ).toBe(true);
    // pushed through Redis: applied well before the SYNC_FREQUENCY re-read (60 s)
    const deadline = Date.now() + 5_000;
    let charged: number | undefined;
    while (charged !== 33 && Date.now() < deadline) {
      const before = (await consumeLogs(u.id)).length;
      expect(await status(slave, u.token.key)).toBe(200);
      await waitFor(async () => (await consumeLogs(u.id)).length > before);
      charged = (await consumeLogs(u.id)).at(-1);
    }
    expect((await consumeLogs(u.id))[0]).toBe(11);
    expect(charged).toBe(33);
    expect(
      (await root('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify({ [MODEL]: 1 }) })).success,
    ).toBe(true);
    await applied(slave, 'ModelRatio', JSON.stringify({ [MODEL]: 1 }));
  });

  it('counts one model request rate limit across both instances', async () => {
    const u = users.limited;
    const root = consoleApi(slave, ROOT_ACCESS, rootId);
    for (const [key, value] of Object.entries({
      ModelRequestRateLimitCount: '5',
      ModelRequestRateLimitSuccessCount: '1000',
      ModelRequestRateLimitDurationMinutes: '1',
      ModelRequestRateLimitEnabled: 'true',
    }))
      expect((await root('PUT', '/api/option/', { key, value })).success).toBe(true);
    await applied(master, 'ModelRequestRateLimitEnabled', 'true');
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => status(i % 2 ? master : slave, u.token.key)),
    );
    expect(statuses.filter((s) => s === 200).length).toBe(5);
    expect(statuses.filter((s) => s === 429).length).toBe(7);
    expect((await root('PUT', '/api/option/', { key: 'ModelRequestRateLimitEnabled', value: 'false' })).success).toBe(
      true,
    );
  });

  it(
    'loses no charge and leaks no reservation when an instance is killed mid-stream and started again',
    async () => {
      const u = users.killed;
      const start = 1_000_000;
      // answered before the kill: charged and logged
      const done = await Promise.all(Array.from({ length: 4 }, () => status(slave, u.token.key)));
      expect(done).toEqual([200, 200, 200, 200]);
      // streams in flight: each has its first piece when the process dies
      const streams = await Promise.all(
        Array.from({ length: 3 }, async () => {
          const res = await call(slave, u.token.key, {
            stream: true,
            max_tokens: 200,
            messages: [{ role: 'user', content: 'hi pieces:20' }],
          });
          const reader = res.body!.getReader();
          await reader.read();
          return reader;
        }),
      );
      await new Promise((r) => setTimeout(r, 300)); // the settlements of the answered calls are committed (50 ms)
      expect((await readHolds(db, { userId: u.id })).length).toBeGreaterThan(0);
      slave.child.kill('SIGKILL');
      await once(slave.child, 'exit');
      for (const r of streams) await r.read().catch(() => undefined);
      // the master keeps serving meanwhile
      expect(await status(master, u.token.key)).toBe(200);

      slave = await startSlave(); // gives back what the dead process held, before it serves
      expect(slave.output()).toContain('gave back the reservations');
      expect(await status(slave, u.token.key)).toBe(200);
      await waitFor(async () => (await consumeLogs(u.id)).length === 6);
      await new Promise((r) => setTimeout(r, 200));
      expect(await readHolds(db, { userId: u.id })).toEqual([]);
      const logs = await consumeLogs(u.id);
      expect(logs).toEqual([11, 11, 11, 11, 11, 11]);
      const row = await userOf(u.id);
      expect(Number(row.quota)).toBe(start - 66);
      expect(Number(row.used_quota)).toBe(66);
      expect(await remainOf(u.token.id)).toBe(start - 66);
    },
    PROCESS_TEST_MS,
  );
};

if (redisUp) await describeEachDb('two gateway processes on one database and one Redis', body, ['sqlite']);
// skipped only where no Redis runs (a developer's machine); CI starts Redis and fails the run when it is missing
else describe.skip('two gateway processes on one database and one Redis (no Redis here)', () => undefined);
