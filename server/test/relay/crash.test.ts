// Every charge has its consume-log row, after any crash: a real gateway process under concurrent load (several users
// and tokens; JSON and streamed answers, some slow) is killed with SIGKILL at a random moment, a few times over the
// same database (the last time with BATCH_UPDATE_ENABLED); once the next process has given back the reservations of
// the dead ones, for every user and limited token, balance now + the quota of its consume-log rows = balance at the
// start, to the unit, and no hold is left.
// The moments come from a seeded generator: the seed is printed, and CRASH_SEED=<seed> runs the same moments again.
import { once } from 'node:events';
import { expect, it } from 'vitest';
import { createTestDatabase, describeEachDb } from '../helpers/databases.js';
import { chatCompletion, MockUpstream, type RecordedRequest } from '../helpers/mock-upstream.js';
import { spawnGateway, type GatewayProcess } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readHolds } from '../../src/services/quota-holds.js';
import { addChannel, addToken, addUser } from './fixtures.js';

const USERS = 3;
const TOKENS_PER_USER = 2;
const USER_START = 2_000_000_000;
const TOKEN_START = 500_000_000;
const CONCURRENCY = 12;
const ROUNDS = 3;

/** mulberry32: a small seeded generator, so that a failing run's kill moments can be replayed */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The upstream's answer: the usage is named by the request (so charges differ), some answers slow, some streamed. */
function answer(req: RecordedRequest) {
  const [completion, slowMs] = String(req.body?.messages?.[0]?.content ?? '0 0')
    .split(' ')
    .map(Number);
  const usage = { prompt_tokens: 5 + (completion % 17), completion_tokens: completion };
  if (req.body?.stream) {
    return {
      kind: 'stream' as const,
      spec: {
        pieces: ['a', 'b', 'c'],
        intervalMs: Math.floor(slowMs / 3),
        usage: 'always' as const,
        usageValue: usage,
      },
    };
  }
  return { kind: 'json' as const, body: chatCompletion(req.body?.model, 'ok', usage), delayMs: slowMs };
}

await describeEachDb('a gateway process killed with SIGKILL under load', (kind) => {
  it('leaves every user and token charged exactly what its consume-log rows say, and no hold', async () => {
    const seed = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`crash test on ${kind}: CRASH_SEED=${seed}`);
    const rnd = generator(seed);
    const upstream = await MockUpstream.start();
    upstream.behave = answer;
    const database = await createTestDatabase(kind);
    let gw: GatewayProcess | undefined;
    let check: TestServer | undefined;
    try {
      const seedServer = await startTestServer({ database });
      const users: number[] = [];
      const tokens: Array<{ id: number; key: string }> = [];
      for (let i = 0; i < USERS; i++) {
        const u = await addUser(seedServer, { quota: USER_START });
        users.push(u.id);
        for (let j = 0; j < TOKENS_PER_USER; j++)
          tokens.push(await addToken(seedServer, u.id, { unlimited: false, remain: TOKEN_START }));
      }
      await addChannel(seedServer, { baseUrl: upstream.url, models: ['gpt-4o-mini'] });
      await seedServer.close();

      let answered = 0;
      for (let round = 0; round < ROUNDS; round++) {
        // the next process gives back what the one killed before held, before it serves; the last one writes its
        // settlements (log rows and hold releases with them) every second only
        gw = await spawnGateway(
          database,
          round === ROUNDS - 1 ? { BATCH_UPDATE_ENABLED: 'true', BATCH_UPDATE_INTERVAL: '1' } : {},
        );
        const abort = new AbortController();
        let running = true;
        const one = async () => {
          const t = tokens[Math.floor(rnd() * tokens.length)];
          const slow = rnd() < 0.25 ? 20 + Math.floor(rnd() * 200) : 0;
          const stream = rnd() < 0.4;
          const res = await fetch(`${gw!.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              model: 'gpt-4o-mini',
              stream,
              messages: [{ role: 'user', content: `${1 + Math.floor(rnd() * 3000)} ${slow}` }],
            }),
            signal: abort.signal,
          });
          await res.arrayBuffer();
          if (res.status === 200) answered++;
        };
        const loops = Array.from({ length: CONCURRENCY }, async () => {
          while (running) await one().catch(() => undefined);
        });
        // killed at a random moment of a second and a half of load
        await new Promise((r) => setTimeout(r, 300 + Math.floor(rnd() * 1200)));
        gw.child.kill('SIGKILL');
        await once(gw.child, 'exit');
        running = false;
        abort.abort();
        await Promise.all(loops);
      }
      expect(answered).toBeGreaterThan(0);

      // a last process over the database recovers the last one killed
      check = await startTestServer({ database });
      const db = check.ctx.db;
      expect(await readHolds(db)).toEqual([]);
      const loggedBy = async (col: 'user_id' | 'token_id') =>
        new Map(
          (
            await db
              .selectFrom('logs')
              .select([col, (eb) => eb.fn.sum<number>('quota').as('q')])
              .where('type', '=', 2)
              .groupBy(col)
              .execute()
          ).map((r) => [Number((r as Record<string, unknown>)[col]), Number(r.q)]),
        );
      const byUser = await loggedBy('user_id');
      const byToken = await loggedBy('token_id');
      const balances = await db.selectFrom('users').select(['id', 'quota']).where('id', 'in', users).execute();
      const remains = await db
        .selectFrom('tokens')
        .select(['id', 'remain_quota'])
        .where(
          'id',
          'in',
          tokens.map((t) => t.id),
        )
        .execute();
      const expected = {
        users: users.map((id) => [id, USER_START]),
        tokens: tokens.map((t) => [t.id, TOKEN_START]),
      };
      const actual = {
        users: users.map((id) => [id, Number(balances.find((b) => b.id === id)!.quota) + (byUser.get(id) ?? 0)]),
        tokens: tokens.map((t) => [
          t.id,
          Number(remains.find((r) => r.id === t.id)!.remain_quota) + (byToken.get(t.id) ?? 0),
        ]),
      };
      const rows = Number(
        (
          await db
            .selectFrom('logs')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('type', '=', 2)
            .executeTakeFirstOrThrow()
        ).n,
      );
      console.log(`crash test on ${kind}: ${answered} answers received, ${rows} consume-log rows`);
      expect(actual, `CRASH_SEED=${seed}`).toEqual(expected);
      expect([...byUser.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    } finally {
      if (gw && gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
      await check?.close();
      await database.drop();
      await upstream.close();
    }
  }, 90_000);
});
