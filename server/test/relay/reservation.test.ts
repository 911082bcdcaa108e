// The reservation statements themselves, on every database: a limited token and its user are reserved together or
// not at all (one statement on PostgreSQL / MySQL, one transaction on SQLite), a refusal names the short side and
// changes nothing even when the connection dies right after it, refunds give both back, reservations racing
// settlement flushes neither deadlock nor lose a unit, and a flush writes each table in one statement (PostgreSQL /
// MySQL) whose row locks do not deadlock with another node's flush.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CompiledQuery, type KyselyPlugin } from 'kysely';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, tokenRow, userRow } from './fixtures.js';
import { relayServices } from '../../src/relay/services.js';
import { openDatabase, sqliteHandle } from '../../src/db/connect.js';
import { Billing, QuotaError, type Reservation, type ReserveInput } from '../../src/services/billing/index.js';

await describeEachDb('quota reservations', (kind) => {
  let s: TestServer;

  beforeAll(async () => {
    s = await startTestServer({ kind });
  });
  afterAll(async () => {
    await s?.close();
  });

  const billing = () => relayServices(s.ctx).billing;

  async function caller(userQuota: number, tokenRemain: number) {
    const u = await addUser(s, { quota: userQuota });
    const t = await addToken(s, u.id, { unlimited: false, remain: tokenRemain });
    const input = (amount: number): ReserveInput => ({
      userId: u.id,
      tokenId: t.id,
      tokenKey: t.key,
      tokenUnlimited: false,
      cachedUserQuota: userQuota,
      amount,
    });
    const balances = async () => ({
      user: (await userRow(s, u.id)).quota,
      token: (await tokenRow(s, t.id)).remain_quota,
    });
    return { u, t, input, balances };
  }

  /** Counts the statements sent through Kysely while `fn` runs; `failAfter` makes every later one fail. */
  async function statements<T>(
    fn: () => Promise<T>,
    failAfter = Infinity,
  ): Promise<{ sent: number; result: PromiseSettledResult<T> }> {
    const db = s.ctx.db;
    const original = db.executeQuery.bind(db);
    let sent = 0;
    db.executeQuery = (async (q: CompiledQuery) => {
      if (++sent > failAfter) throw new Error('connection lost');
      return original(q);
    }) as typeof db.executeQuery;
    try {
      const [result] = await Promise.allSettled([fn()]);
      return { sent, result };
    } finally {
      db.executeQuery = original;
    }
  }

  it('reserves a limited token and its user together, in one statement on PostgreSQL and MySQL', async () => {
    const c = await caller(1_000, 500);
    const { sent, result } = await statements(() => billing().reserve(c.input(300)));
    expect(result.status).toBe('fulfilled');
    // SQLite runs its prepared statements on the raw connection (group commit), not through Kysely; MySQL first
    // creates the (user, token) pair's hold row, once (Billing.ensureHoldRow)
    expect(sent).toBe(kind === 'sqlite' ? 0 : kind === 'mysql' ? 2 : 1);
    expect(await c.balances()).toEqual({ user: 700, token: 200 });
  });

  it.each([
    {
      short: 'token',
      user: 1_000,
      token: 200,
      code: 'pre_consume_token_quota_failed',
      named: () => `token remain quota: ${billing().formatQuota(200)}`,
    },
    {
      short: 'user',
      user: 250,
      token: 1_000,
      code: 'insufficient_user_quota',
      named: () => `user quota: ${billing().formatQuota(250)}`,
    },
  ])('refuses a short $short without touching the other side, and names it', async ({ user, token, code, named }) => {
    const c = await caller(user, token);
    const err = await billing()
      .reserve(c.input(300))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuotaError);
    expect((err as QuotaError).code).toBe(code);
    expect((err as QuotaError).message).toContain(`${named()}, need quota: ${billing().formatQuota(300)}`);
    expect(await c.balances()).toEqual({ user, token });
  });

  it('leaves the token whole when the connection dies right after a short user refused the reservation', async () => {
    // before: the token was reserved by one statement and given back by a third; losing the connection in between
    // kept the token charged for a request that never ran
    const c = await caller(250, 1_000);
    const { result } = await statements(() => billing().reserve(c.input(300)), 1);
    expect(result.status).toBe('rejected');
    expect(await c.balances()).toEqual({ user: 250, token: 1_000 });
  });

  // SQLite only: the group commit of reservations is the SQLite writer's (PostgreSQL and MySQL batch every one)
  it.runIf(kind === 'sqlite')('commits a group of reservations early only for requests that wait for it', async () => {
    const c = await caller(1_000_000, 1_000_000);
    const handle = sqliteHandle(s.ctx.db)!;
    // read synchronously, in the turn the reservations were queued in
    const userNow = () =>
      (handle.prepare('SELECT quota FROM users WHERE id = ?').get(c.u.id) as { quota: number }).quota;
    const queue = (n: number, overlapped: boolean) =>
      Array.from({ length: n }, () => billing().reserve({ ...c.input(10), overlapped }));

    // 8 waiting requests: committed at once, before the turn ends
    let pending = queue(8, false);
    expect(userNow()).toBe(1_000_000 - 80);
    await Promise.all(pending);
    // overlapped ones (their requests are already upstream) wait for the end of the turn, up to 64 of them
    pending = queue(63, true);
    expect(userNow()).toBe(1_000_000 - 80);
    pending.push(...queue(1, true));
    expect(userNow()).toBe(1_000_000 - 80 - 640);
    await Promise.all(pending);
    pending = queue(7, true);
    expect(userNow()).toBe(1_000_000 - 720);
    await Promise.all(pending);
    expect(userNow()).toBe(1_000_000 - 790);
    expect(await c.balances()).toEqual({ user: 1_000_000 - 790, token: 1_000_000 - 790 });
  });

  // SQLite only, for the same reason: the check phases belong to the SQLite writer's group commit
  it.runIf(kind === 'sqlite')(
    'commits overlapped and waiting reservations at the first check phase, whichever HTTP client is used',
    async () => {
      const c = await caller(1_000_000, 1_000_000);
      const handle = sqliteHandle(s.ctx.db)!;
      const userNow = () =>
        (handle.prepare('SELECT quota FROM users WHERE id = ?').get(c.u.id) as { quota: number }).quota;
      // at the first check phase: one schedule, whether the upstream call is written during its dispatch (the lean
      // client, LEAN_HTTP, the default) or from a setImmediate of undici's own (then after the commit)
      const atCheckPhase = () => new Promise<number>((resolve) => setImmediate(() => resolve(userNow())));

      // the lean client: the overlapped group commits at the first check phase
      const lean = billing().reserve({ ...c.input(10), overlapped: true });
      expect(await atCheckPhase()).toBe(1_000_000 - 10);
      await lean;

      // undici's calls (LEAN_HTTP=false): the same schedule
      const other = await startTestServer({ kind, database: s.database, env: { LEAN_HTTP: 'false' } });
      try {
        const undici = () => relayServices(other.ctx).billing;
        const overlapped = undici().reserve({ ...c.input(10), overlapped: true });
        expect(await atCheckPhase()).toBe(1_000_000 - 20);
        await overlapped;
        expect(userNow()).toBe(1_000_000 - 20);

        // a waiting request joining a batch of overlapped ones commits with it at the first check phase
        const both = [
          undici().reserve({ ...c.input(10), overlapped: true }),
          undici().reserve({ ...c.input(20), overlapped: false }),
        ];
        expect(await atCheckPhase()).toBe(1_000_000 - 50);
        await Promise.all(both);
        expect(await c.balances()).toEqual({ user: 1_000_000 - 50, token: 1_000_000 - 50 });
      } finally {
        await other.close();
      }
    },
  );

  // on PostgreSQL / MySQL every reservation is batched, whether its request waits for it or is already upstream
  for (const overlapped of [true, false]) {
    it.runIf(kind !== 'sqlite')(
      `takes the ${overlapped ? 'overlapped' : 'waiting'} reservations that come while one is in flight together, every unit exact`,
      async () => {
        const a = await caller(1_000_000, 0);
        const tokens = await Promise.all(
          Array.from({ length: 5 }, () => addToken(s, a.u.id, { unlimited: false, remain: 10_000 })),
        );
        const unlimited = await addToken(s, a.u.id, { unlimited: true });
        const other = await addUser(s, { quota: 50_000 });
        const ask = (userId: number, t: { id: number; key: string }, tokenUnlimited: boolean, amount: number) =>
          billing().reserve({
            userId,
            tokenId: t.id,
            tokenKey: t.key,
            tokenUnlimited,
            cachedUserQuota: 1_000_000,
            amount,
            overlapped,
          });
        const { sent, result } = await statements(() =>
          Promise.all([
            // a token twice, another user's playground-like reservation (no token), an unlimited token
            ...tokens.map((t, i) => ask(a.u.id, t, false, 100 * (i + 1))),
            ask(a.u.id, tokens[0], false, 7),
            ask(other.id, { id: 0, key: '' }, true, 900),
            ask(a.u.id, unlimited, true, 50),
          ]),
        );
        // the first at once, on its own; the seven that came meanwhile together: one statement on PostgreSQL, one
        // transaction on MySQL (which does not go through db.executeQuery), never one by one; MySQL's first one also
        // creates its hold row
        expect(sent).toBe(2);
        expect(result.status).toBe('fulfilled');
        const rs = (result as PromiseFulfilledResult<Reservation[]>).value;
        expect(rs.map((r) => [r.user, r.token])).toEqual([
          [100, 100],
          [200, 200],
          [300, 300],
          [400, 400],
          [500, 500],
          [7, 7],
          [900, 0],
          [50, 0],
        ]);
        expect((await userRow(s, a.u.id)).quota).toBe(1_000_000 - 1_557);
        expect((await userRow(s, other.id)).quota).toBe(50_000 - 900);
        expect(await Promise.all(tokens.map(async (t) => (await tokenRow(s, t.id)).remain_quota))).toEqual([
          10_000 - 107,
          9_800,
          9_700,
          9_600,
          9_500,
        ]);
        // given back exactly, as any reservation
        for (const r of rs) await billing().refund(r);
        expect((await userRow(s, a.u.id)).quota).toBe(1_000_000);
        expect(await Promise.all(tokens.map(async (t) => (await tokenRow(s, t.id)).remain_quota))).toEqual([
          10_000, 10_000, 10_000, 10_000, 10_000,
        ]);
      },
    );
  }

  // PostgreSQL / MySQL only: their batches are refused and retried one by one (SQLite sums a group, tested below)
  it.runIf(kind !== 'sqlite')(
    'reserves a refused batch one by one: who fits is reserved, who is short is refused',
    async () => {
      const a = await caller(100, 1_000);
      const rich = await caller(1_000_000, 1_000_000);
      const ask = (c: typeof a, amount: number) => billing().reserve({ ...c.input(amount), overlapped: true });
      // 3 × 40 on a user with 100: the first goes at once (100 → 60); the batch of the others holds 80 of that user,
      // which does not fit, so nothing of it is taken and each goes on its own
      const { sent, result } = await statements(() =>
        Promise.allSettled([ask(a, 40), ask(rich, 500), ask(a, 40), ask(a, 40)]),
      );
      // the first, the batch (PostgreSQL: a statement; MySQL: a transaction, not counted here), then one statement
      // each, and the reads naming the short side for its message (MySQL reads the token's balance first); MySQL also
      // creates the hold row of each (user, token) pair the first time it reserves on its own, and makes sure of the
      // refused one's (Billing.lostHoldRow)
      expect(sent).toBe(kind === 'postgres' ? 1 + 1 + 3 + 1 : 1 + 1 + 3 + 1 + 1 + 2);
      const outcomes = (result as PromiseFulfilledResult<PromiseSettledResult<Reservation>[]>).value;
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(refused).toHaveLength(1);
      expect(refused[0].reason).toBeInstanceOf(QuotaError);
      expect((refused[0].reason as QuotaError).code).toBe('insufficient_user_quota');
      expect(await a.balances()).toEqual({ user: 20, token: 920 });
      expect(await rich.balances()).toEqual({ user: 1_000_000 - 500, token: 1_000_000 - 500 });
    },
  );

  // SQLite only: the group commit sums per user (the other databases reserve each request, tested above)
  it.runIf(kind === 'sqlite')(
    'sums a group commit per user, and takes a sum that does not fit part by part in order',
    async () => {
      const a = await caller(100, 1_000);
      const rich = await caller(1_000_000, 1_000_000);
      const richToken2 = await addToken(s, rich.u.id, { unlimited: false, remain: 1_000 });
      const ask = (c: typeof a, amount: number, t = c.t) =>
        billing().reserve({ ...c.input(amount), tokenId: t.id, tokenKey: t.key, overlapped: true });
      // one group commit: 3 × 40 on a user with 100 (the sum, 120, does not fit: 40, 40, then refused), and the rich
      // user's two tokens, whose sum fits, with one of them short on its own token
      const outcomes = await Promise.allSettled([
        ask(a, 40),
        ask(rich, 500),
        ask(a, 40),
        ask(rich, 2_000, richToken2),
        ask(a, 40),
        ask(rich, 300, richToken2),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'rejected',
        'rejected',
        'fulfilled',
      ]);
      expect(((outcomes[3] as PromiseRejectedResult).reason as QuotaError).code).toBe('pre_consume_token_quota_failed');
      expect(((outcomes[4] as PromiseRejectedResult).reason as QuotaError).code).toBe('insufficient_user_quota');
      expect(await a.balances()).toEqual({ user: 20, token: 920 });
      expect(await rich.balances()).toEqual({ user: 1_000_000 - 800, token: 1_000_000 - 500 });
      expect((await tokenRow(s, richToken2.id)).remain_quota).toBe(700);
      // what was taken is held for this node, nothing more: given back, every balance is whole again
      for (const o of outcomes) if (o.status === 'fulfilled') await billing().refund(o.value);
      expect(await a.balances()).toEqual({ user: 100, token: 1_000 });
      expect(await rich.balances()).toEqual({ user: 1_000_000, token: 1_000_000 });
      expect((await tokenRow(s, richToken2.id)).remain_quota).toBe(1_000);
    },
  );

  it('gives a refunded reservation back to both the token and the user', async () => {
    const c = await caller(1_000, 500);
    const r = await billing().reserve(c.input(300));
    expect(await c.balances()).toEqual({ user: 700, token: 200 });
    await billing().refund(r);
    await billing().refund(r); // once only
    expect(await c.balances()).toEqual({ user: 1_000, token: 500 });
  });

  it('keeps every unit exact when reservations race settlement flushes over shared rows', async () => {
    // several tokens of one user: reservations lock token then user, flushes update many tokens and the user; in
    // another order the two would deadlock on PostgreSQL / MySQL
    const u = await addUser(s, { quota: 10_000_000 });
    const tokens = await Promise.all(
      Array.from({ length: 6 }, () => addToken(s, u.id, { unlimited: false, remain: 1_000_000 })),
    );
    const b = billing();
    const deadlocksBefore = b.deadlockRetries;
    const N = 240;
    let flushes = 0;
    const flusher = (async () => {
      for (let i = 0; i < 40; i++) {
        await b.flush();
        flushes++;
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const outcomes = await Promise.allSettled(
      Array.from({ length: N }, async (_, i) => {
        const t = tokens[i % tokens.length];
        // half of them overlapped: on PostgreSQL those of a turn go as one statement, racing the flushes too
        const overlapped = i % 2 === 1;
        const r = await b.reserve({
          userId: u.id,
          tokenId: t.id,
          tokenKey: t.key,
          tokenUnlimited: false,
          cachedUserQuota: 10_000_000,
          amount: 100,
          overlapped,
        });
        // every third request fails upstream and is refunded; the others are charged 40 of their 100
        if (i % 3 === 0) await b.refund(r);
        else b.settle(r, { quota: 40, channelId: 0, countRequest: true });
      }),
    );
    await flusher;
    await b.flush();
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    expect(flushes).toBe(40);
    // the same lock order everywhere: no statement had to be retried as a deadlock victim
    expect(b.deadlockRetries - deadlocksBefore).toBe(0);
    const charged: number[] = Array.from({ length: N }, (_, i) => (i % 3 === 0 ? 0 : 40));
    expect((await userRow(s, u.id)).quota).toBe(10_000_000 - charged.reduce((a, q) => a + q, 0));
    for (const [k, t] of tokens.entries()) {
      const spent = charged.filter((_, i) => i % tokens.length === k).reduce((a, q) => a + q, 0);
      expect((await tokenRow(s, t.id)).remain_quota).toBe(1_000_000 - spent);
    }
  });
  /** A reservation of 0 whose settlement queues exactly `quota` on the user, the token and the channel. */
  const charge = (b: Billing, userId: number, t: { id: number; key: string }, quota: number, channelId: number) => {
    const r: Reservation = {
      userId,
      tokenId: t.id,
      tokenKey: t.key,
      user: 0,
      token: 0,
      tokenUnlimited: false,
      state: 'open',
    };
    b.settle(r, { quota, channelId, countRequest: true });
  };

  async function manyTokens(userId: number, n: number, remain: number) {
    const keys = Array.from({ length: n }, (_, i) =>
      `settle${process.pid}${Date.now()}${i}`.padEnd(48, 'k').slice(0, 48),
    );
    for (let i = 0; i < n; i += 100) {
      await s.ctx.db
        .insertInto('tokens')
        .values(
          keys.slice(i, i + 100).map((key) => ({
            user_id: userId,
            key,
            name: 'settle',
            status: 1,
            remain_quota: remain,
            unlimited_quota: false,
            expired_time: -1,
          })),
        )
        .execute();
    }
    const rows = await s.ctx.db
      .selectFrom('tokens')
      .select(['id', 'key'])
      .where('key', 'in', keys)
      .orderBy('id')
      .execute();
    expect(rows).toHaveLength(n);
    return rows.map((r) => ({ id: Number(r.id), key: r.key }));
  }

  it('settles a flush with one statement per table on PostgreSQL and MySQL, every row exact', async () => {
    // one statement per row was one round trip per active token, user and channel: more than one per request
    const u = await addUser(s, { quota: 1_000_000 });
    const tokens = await manyTokens(u.id, 260, 5_000);
    const channelId = await addChannel(s, { baseUrl: 'http://127.0.0.1:9', models: ['m'] });
    let sent = 0;
    const counter: KyselyPlugin = {
      transformQuery: (a) => a.node,
      transformResult: async (a) => {
        sent++;
        return a.result;
      },
    };
    const { tokens: tokenCache, users: userCache } = relayServices(s.ctx);
    const b = new Billing({ ...s.ctx, db: s.ctx.db.withPlugin(counter) }, tokenCache, userCache);
    tokens.forEach((t, i) => charge(b, u.id, t, 10 + i, channelId));
    await b.flush();
    // 260 tokens, the user and the channel: one transaction (its hold releases and log rows commit with it), one
    // statement per table (on SQLite this Billing takes the Kysely path, as it does while a console transaction holds
    // the connection)
    expect(sent).toBe(3);
    const total = tokens.reduce((a, _, i) => a + 10 + i, 0);
    const rows = await s.ctx.db
      .selectFrom('tokens')
      .select(['id', 'remain_quota', 'used_quota', 'accessed_time'])
      .where('user_id', '=', u.id)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [Number(r.remain_quota), Number(r.used_quota)])).toEqual(
      tokens.map((_, i) => [5_000 - 10 - i, 10 + i]),
    );
    for (const r of rows) expect(Number(r.accessed_time)).toBeGreaterThan(0);
    const user = await userRow(s, u.id);
    expect([user.quota, user.used_quota, user.request_count]).toEqual([1_000_000 - total, total, 260]);
    const ch = await s.ctx.db
      .selectFrom('channels')
      .select('used_quota')
      .where('id', '=', channelId)
      .executeTakeFirstOrThrow();
    expect(Number(ch.used_quota)).toBe(total);
    await b.stop();
  });

  it('flushes of two nodes over the same rows neither deadlock nor lose a unit', async () => {
    // two gateways on one database: each flush locks its tokens, then the user, in id order
    const u = await addUser(s, { quota: 10_000_000 });
    const tokens = await manyTokens(u.id, 40, 1_000_000);
    const { tokens: tokenCache, users: userCache } = relayServices(s.ctx);
    const nodes = [new Billing(s.ctx, tokenCache, userCache), new Billing(s.ctx, tokenCache, userCache)];
    const ROUNDS = 25;
    await Promise.all(
      nodes.map(async (b, n) => {
        for (let round = 0; round < ROUNDS; round++) {
          // the two nodes see the tokens in opposite orders
          for (const t of n === 0 ? tokens : [...tokens].reverse()) charge(b, u.id, t, 3, 0);
          await b.flush();
        }
      }),
    );
    expect(nodes.map((b) => b.deadlockRetries)).toEqual([0, 0]);
    for (const t of tokens) expect((await tokenRow(s, t.id)).remain_quota).toBe(1_000_000 - 2 * ROUNDS * 3);
    const user = await userRow(s, u.id);
    expect([user.quota, user.request_count]).toEqual([
      10_000_000 - 2 * ROUNDS * 3 * tokens.length,
      2 * ROUNDS * tokens.length,
    ]);
    await Promise.all(nodes.map((b) => b.stop()));
  });
  // PostgreSQL only: prepared statements and pg_prepared_statements are PostgreSQL's
  it.runIf(kind === 'postgres')(
    'runs the reservation and the flush as prepared statements on PostgreSQL, unnamed again behind a pooler that loses them',
    async () => {
      // one pooled connection, so that its pg_prepared_statements shows what this Billing ran
      const namingOff: Error[] = [];
      const one = await openDatabase({
        dsn: s.database.dsn,
        sqlitePath: '',
        poolSize: 1,
        onNamingOff: (err) => namingOff.push(err),
      });
      const preparedTexts = async () =>
        (
          await one.db.executeQuery<{ statement: string }>(
            CompiledQuery.raw('SELECT statement FROM pg_prepared_statements'),
          )
        ).rows.map((p) => p.statement);
      try {
        const { tokens: tokenCache, users: userCache } = relayServices(s.ctx);
        const b = new Billing({ ...s.ctx, db: one.db }, tokenCache, userCache);
        const c = await caller(1_000, 500);
        const r = await b.reserve(c.input(300));
        b.settle(r, { quota: 100, channelId: 0, countRequest: true });
        await b.flush();
        expect(await c.balances()).toEqual({ user: 900, token: 400 });
        const texts = await preparedTexts();
        expect(texts.some((t) => t.startsWith('WITH t AS (UPDATE tokens SET remain_quota'))).toBe(true);
        // the token's and the user's settlement, and the release of the node's hold
        expect(texts.filter((t) => t.includes('unnest('))).toHaveLength(3);
        expect(namingOff).toEqual([]);
        // what a transaction-mode pooler does: the next call lands on a server connection that never prepared them
        await one.db.executeQuery(CompiledQuery.raw('DEALLOCATE ALL'));
        const r2 = await b.reserve(c.input(200));
        b.settle(r2, { quota: 50, channelId: 0, countRequest: true });
        await b.flush();
        expect(await c.balances()).toEqual({ user: 850, token: 350 });
        expect(namingOff.map((e) => (e as { code?: string }).code)).toEqual(['26000']);
        expect(await preparedTexts()).toEqual([]);
      } finally {
        await one.close();
      }
    },
  );
});
