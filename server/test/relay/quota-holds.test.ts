// Crash recovery of reservations (services/quota-holds.ts): every open reservation is recorded as its process's hold,
// released exactly when it is settled or refunded; a process that dies holding some has them given back once: at
// once by the next process on the same host, else by a live node once its heartbeat is stale. The last test kills a
// real gateway process (SIGKILL) with streams in flight and starts the next one over the same database, on each of
// SQLite, PostgreSQL and MariaDB.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, createTestDatabase } from '../helpers/databases.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { answerOneAndHoldStreams, consumedQuota, killGateway, spawnGateway } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { openDatabase } from '../../src/db/connect.js';
import type { NewLog } from '../../src/db/schema.js';
import { relayServices } from '../../src/relay/services.js';
import { Billing, type ReserveInput } from '../../src/services/billing/index.js';
import { HOLD_JOURNAL_COMPACT, newNodeId, processGone, procStat, readHolds } from '../../src/services/quota-holds.js';
import { addChannel, addToken, addUser, tokenRow, userRow, waitFor } from './fixtures.js';

const now = () => Math.floor(Date.now() / 1000);

await describeEachDb('quota holds', (kind) => {
  let s: TestServer;

  beforeAll(async () => {
    s = await startTestServer({ kind });
  });
  afterAll(async () => {
    await s?.close();
  });

  /** a Billing of its own: another gateway process on the same database (not started: tests register it as needed) */
  const node = (opts: { staleSec?: number } = {}) => {
    const { tokens, users } = relayServices(s.ctx);
    return new Billing(s.ctx, tokens, users, { heartbeatMs: 1e9, ...opts });
  };

  // by (user, token); pairs that hold nothing (a row of zeros kept between requests, or journal rows that cancel out) are left out
  const holdsOf = async (b: Billing) =>
    (await readHolds(s.ctx.db, { node: b.node })).map((h) => [h.userId, h.tokenId, h.user, h.token]);
  /** every row the node has in either table */
  const rowsOf = async (b: Billing) => [
    ...(await s.ctx.db.selectFrom('quota_holds').select('node').where('node', '=', b.node).execute()),
    ...(await s.ctx.db.selectFrom('quota_hold_journal').select('node').where('node', '=', b.node).execute()),
  ];

  async function caller() {
    const u = await addUser(s, { quota: 1_000_000 });
    const limited = await addToken(s, u.id, { unlimited: false, remain: 500_000 });
    const unlimited = await addToken(s, u.id, { unlimited: true });
    const input = (
      t: { id: number; key: string } | null,
      amount: number,
      tokenUnlimited = t !== limited,
    ): ReserveInput => ({
      userId: u.id,
      tokenId: t?.id ?? 0,
      tokenKey: t?.key ?? '',
      tokenUnlimited,
      cachedUserQuota: 1_000_000,
      amount,
    });
    const balances = async () => ({
      user: (await userRow(s, u.id)).quota,
      token: (await tokenRow(s, limited.id)).remain_quota,
    });
    return { u, limited, unlimited, input, balances };
  }

  it('records each open reservation as the node’s hold and releases it exactly on settlement and refund', async () => {
    const b = node();
    const c = await caller();
    const r1 = await b.reserve(c.input(c.limited, 300));
    const r2 = await b.reserve(c.input(c.limited, 200));
    const r3 = await b.reserve(c.input(c.unlimited, 50));
    const r4 = await b.reserve(c.input(null, 70)); // the playground: the user's quota only
    const [pg, lim, unl] = [0, c.limited.id, c.unlimited.id];
    // holdsOf orders by (user, token): the playground's token 0 first, then the tokens as created
    const open = () => holdsOf(b);
    expect(await open()).toEqual([
      [c.u.id, pg, 70, 0],
      [c.u.id, lim, 500, 500],
      [c.u.id, unl, 50, 0],
    ]);

    b.settle(r1, { quota: 120, channelId: 0, countRequest: true });
    await b.refund(r3);
    // a settlement's release is written with its flush, before its deltas
    expect(await open()).toEqual([
      [c.u.id, pg, 70, 0],
      [c.u.id, lim, 500, 500],
    ]);
    await b.flush();
    expect(await open()).toEqual([
      [c.u.id, pg, 70, 0],
      [c.u.id, lim, 200, 200],
    ]);
    b.settle(r2, { quota: 0, channelId: 0, countRequest: false });
    b.settle(r4, { quota: 70, channelId: 0, countRequest: true });
    await b.flush();
    expect(await open()).toEqual([]);
    expect(await c.balances()).toEqual({ user: 1_000_000 - 120 - 70, token: 500_000 - 120 });

    // a clean stop leaves no row of the node behind
    await s.ctx.db.insertInto('quota_hold_nodes').values({ node: b.node, seen_at: now() }).execute();
    await b.stop();
    expect(await rowsOf(b)).toEqual([]);
    expect(await s.ctx.db.selectFrom('quota_hold_nodes').select('node').where('node', '=', b.node).execute()).toEqual(
      [],
    );
  });

  it('resolves a flush only once every settlement made before it is written, however flushes overlap', async () => {
    const b = node();
    const c = await caller();
    const rs = await Promise.all(Array.from({ length: 6 }, () => b.reserve(c.input(c.limited, 100))));
    const start = await c.balances();
    // settling request i (charge 10 × (i + 1)) gives back 100 − 10 × (i + 1)
    const givenBack = (upTo: number) => rs.slice(0, upTo + 1).reduce((sum, _, k) => sum + 100 - 10 * (k + 1), 0);
    const checks: Promise<void>[] = [];
    for (const [i, r] of rs.entries()) {
      b.settle(r, { quota: 10 * (i + 1), channelId: 0, countRequest: true });
      // a flush that resolves has written its own settlement and every earlier one (later ones it may have taken too)
      checks.push(
        b.flush().then(async () => {
          const now = await c.balances();
          expect(now.user).toBeGreaterThanOrEqual(start.user + givenBack(i));
          expect(now.token).toBeGreaterThanOrEqual(start.token + givenBack(i));
        }),
      );
    }
    await Promise.all(checks);
    expect(await c.balances()).toEqual({ user: start.user + givenBack(5), token: start.token + givenBack(5) });
    expect(await holdsOf(b)).toEqual([]);
  });

  // the release, the deltas and the log row of a settlement are one commit (a crash leaves each request charged and
  // logged, or neither): with BATCH_UPDATE_INTERVAL the holds wait with the deltas
  it('keeps the holds with the deltas when BATCH_UPDATE_INTERVAL holds them for seconds, and writes both at the stop', async () => {
    const { tokens, users } = relayServices(s.ctx);
    const b = new Billing(
      { ...s.ctx, config: { ...s.ctx.config, batchUpdateEnabled: true, batchUpdateIntervalSec: 60 } },
      tokens,
      users,
    );
    const c = await caller();
    const r = await b.reserve(c.input(c.limited, 100));
    const reserved = await c.balances();
    b.settle(r, { quota: 30, channelId: 0, countRequest: true });
    await new Promise((r) => setTimeout(r, 300));
    // a crash now would give the reservation back (and the request has no log row either)
    expect(await holdsOf(b)).toEqual([[c.u.id, c.limited.id, 100, 100]]);
    expect(await c.balances()).toEqual(reserved);
    await b.stop();
    expect(await holdsOf(b)).toEqual([]);
    expect(await c.balances()).toEqual({ user: reserved.user + 70, token: reserved.token + 70 });
  });

  it('commits a settlement’s log row with its charge and release; a row the database refuses is left out, its charge kept', async () => {
    const b = node();
    const c = await caller();
    const row = (model: string, quota: number): NewLog => ({
      user_id: c.u.id,
      created_at: now(),
      type: 2,
      content: 'settled',
      username: c.u.username,
      token_name: 'test-token',
      model_name: model,
      quota,
      prompt_tokens: 1,
      completion_tokens: 1,
      use_time: 0,
      is_stream: false,
      channel_id: 0,
      token_id: c.limited.id,
      group: 'default',
      other: '',
    });
    const logged = async () =>
      (
        await s.ctx.db
          .selectFrom('logs')
          .select(['model_name', 'quota'])
          .where('user_id', '=', c.u.id)
          .orderBy('id')
          .execute()
      ).map((r) => [r.model_name, Number(r.quota)]);
    b.settle(await b.reserve(c.input(c.limited, 100)), { quota: 40, channelId: 0, countRequest: true }, row('m-a', 40));
    expect(await logged()).toEqual([]);
    await b.flush();
    expect(await logged()).toEqual([['m-a', 40]]);
    expect(await holdsOf(b)).toEqual([]);
    expect(await c.balances()).toEqual({ user: 1_000_000 - 40, token: 500_000 - 40 });
    // SQLite takes a model name of any length
    if (kind === 'sqlite') return;
    b.settle(
      await b.reserve(c.input(c.limited, 100)),
      { quota: 25, channelId: 0, countRequest: true },
      row('x'.repeat(300), 25),
    );
    b.settle(await b.reserve(c.input(c.limited, 100)), { quota: 5, channelId: 0, countRequest: true }, row('m-b', 5));
    // the row too long for its column fails the flush: nothing of it is written, the holds stay
    await expect(b.flush()).rejects.toThrow();
    expect(await logged()).toEqual([['m-a', 40]]);
    expect(await holdsOf(b)).toEqual([[c.u.id, c.limited.id, 200, 200]]);
    // the next flush leaves that row out and writes everything else
    await b.flush();
    expect(await logged()).toEqual([
      ['m-a', 40],
      ['m-b', 5],
    ]);
    expect(await holdsOf(b)).toEqual([]);
    expect(await c.balances()).toEqual({ user: 1_000_000 - 70, token: 500_000 - 70 });
  });

  // SQLite only: the writer worker and the hold journal exist on a SQLite file alone (PostgreSQL and MySQL settle in
  // the main process and keep pair rows, covered below), so this is skipped on the other two databases
  it.runIf(kind === 'sqlite').each([
    ['quiet', false],
    ['busy', true],
  ])(
    'has the SQLite worker write each charge with its log row, compacting the journal, and waits for it before refusing (%s gateway)',
    async (_, busy) => {
      // the app's own billing: its log writer's worker takes charges with their rows
      const { billing: b, logs } = relayServices(s.ctx);
      // a busy gateway's rows wait in the worker, grouped by token (the load is read every 100 ms: not before this test ends)
      const load = logs as unknown as { quiet: boolean; windowStart: number };
      const saved = { ...load };
      if (busy) Object.assign(load, { quiet: false, windowStart: Date.now() + 3_600_000 });
      try {
        const ROUNDS = 150;
        // enough for every round's charge (1 or 2), but later rounds fit only once the earlier give-backs are written
        const u = await addUser(s, { quota: 100 + (ROUNDS / 2) * 3 });
        // two tokens in turn: a busy gateway's rows are sorted by token in the worker, each with its charge
        const ts = [
          await addToken(s, u.id, { unlimited: false, remain: 1_000 }),
          await addToken(s, u.id, { unlimited: false, remain: 1_000 }),
        ];
        const input = (t: { id: number; key: string }): ReserveInput => ({
          userId: u.id,
          tokenId: t.id,
          tokenKey: t.key,
          tokenUnlimited: false,
          cachedUserQuota: 100,
          amount: 100,
        });
        const row = (t: { id: number }, quota: number): NewLog =>
          ({
            user_id: u.id,
            created_at: now(),
            type: 2,
            content: '',
            username: u.username,
            token_name: 'w',
            model_name: 'm',
            quota,
            token_id: t.id,
            group: 'default',
            other: '',
          }) as NewLog;
        const logged = async () =>
          Number(
            (
              await s.ctx.db
                .selectFrom('logs')
                .select((eb) => eb.fn.sum<number>('quota').as('q'))
                .where('user_id', '=', u.id)
                .executeTakeFirst()
            )?.q ?? 0,
          );
        // each settled request gives 99 back, in the worker's transaction with its row: a reservation refused while some
        // are still on their way waits for them and tries again
        for (let i = 0; i < ROUNDS; i++) {
          const t = ts[i % 2];
          b.settle(
            await b.reserve(input(t)),
            { quota: 1 + (i % 2), channelId: 0, countRequest: true },
            row(t, 1 + (i % 2)),
          );
        }
        await b.flush();
        expect(await logged()).toBe((ROUNDS / 2) * 3);
        expect(await readHolds(s.ctx.db, { node: b.node })).toEqual([]);
        expect((await userRow(s, u.id)).quota).toBe(100);
        expect((await tokenRow(s, ts[0].id)).remain_quota).toBe(1_000 - ROUNDS / 2);
        expect((await tokenRow(s, ts[1].id)).remain_quota).toBe(1_000 - ROUNDS);
        // a journal row for each reservation and each release, compacted by the worker as it goes
        const journal = await s.ctx.db
          .selectFrom('quota_hold_journal')
          .select('seq')
          .where('node', '=', b.node)
          .execute();
        expect(journal.length).toBeLessThan(ROUNDS);
      } finally {
        Object.assign(load, { quiet: saved.quiet, windowStart: saved.windowStart });
      }
    },
  );

  it('keeps a started node’s heartbeat on the database clock, and registers it again if another node removed it', async () => {
    const { tokens, users } = relayServices(s.ctx);
    const b = new Billing(s.ctx, tokens, users, { heartbeatMs: 50 });
    await b.start();
    const row = () =>
      s.ctx.db.selectFrom('quota_hold_nodes').select(['node', 'seen_at']).where('node', '=', b.node).executeTakeFirst();
    expect(Math.abs(Number((await row())!.seen_at) - now())).toBeLessThanOrEqual(2);
    await s.ctx.db.deleteFrom('quota_hold_nodes').where('node', '=', b.node).execute();
    await waitFor(async () => !!(await row()), 2_000);
    await b.stop();
    expect(await row()).toBeUndefined();
  });

  // SQLite only, for the same reason: the journal is SQLite's way of keeping holds
  it.runIf(kind === 'sqlite')(
    'keeps SQLite’s holds as one journal row per commit, compacted into one row without losing a unit',
    async () => {
      const b = node();
      const c = await caller();
      const journalRows = async () =>
        (await s.ctx.db.selectFrom('quota_hold_journal').select('seq').where('node', '=', b.node).execute()).length;
      // six reservations of one event-loop turn: one group commit, one row
      const batch = await Promise.all(
        Array.from({ length: 6 }, (_, i) => b.reserve(c.input(i % 2 ? c.unlimited : c.limited, 10 + i))),
      );
      expect(await journalRows()).toBe(1);
      expect(await holdsOf(b)).toEqual([
        [c.u.id, c.limited.id, 10 + 12 + 14, 10 + 12 + 14],
        [c.u.id, c.unlimited.id, 11 + 13 + 15, 0],
      ]);
      for (const r of batch) await b.refund(r);
      // one open reservation all along, and enough settled ones (a row each for the reservation and its release) to be
      // compacted twice
      await b.reserve(c.input(c.limited, 7));
      const rounds = HOLD_JOURNAL_COMPACT + 20;
      for (let i = 0; i < rounds; i++) {
        b.settle(await b.reserve(c.input(c.unlimited, 3)), { quota: 1, channelId: 0, countRequest: true });
        await b.flush();
      }
      expect(await journalRows()).toBeLessThanOrEqual(HOLD_JOURNAL_COMPACT + 1);
      expect(await holdsOf(b)).toEqual([[c.u.id, c.limited.id, 7, 7]]);
      expect(await c.balances()).toEqual({ user: 1_000_000 - 7 - rounds, token: 500_000 - 7 });
      // what a recovery of the node gives back is the open reservation, to the unit
      await s.ctx.db
        .insertInto('quota_hold_nodes')
        .values({ node: b.node, seen_at: now() - 600 })
        .execute();
      expect(await node({ staleSec: 60 }).holdNodes.sweep()).toEqual([{ node: b.node, users: 1, tokens: 1, quota: 7 }]);
      expect(await c.balances()).toEqual({ user: 1_000_000 - rounds, token: 500_000 });
      expect(await rowsOf(b)).toEqual([]);
    },
  );

  // PostgreSQL / MySQL: a pair's row stays between its requests (SQLite writes no pair rows)
  it.skipIf(kind === 'sqlite')(
    'prunes the rows of pairs that hold nothing, and records the next reservation of such a pair again',
    async () => {
      const { tokens, users } = relayServices(s.ctx);
      const b = new Billing(s.ctx, tokens, users, { heartbeatMs: 50, pruneBeats: 1 });
      await b.start();
      const c = await caller();
      const rows = () => s.ctx.db.selectFrom('quota_holds').select('token_id').where('node', '=', b.node).execute();
      b.settle(await b.reserve(c.input(c.limited, 100)), { quota: 40, channelId: 0, countRequest: true });
      await b.flush();
      await waitFor(async () => (await rows()).length === 0, 2_000);
      const r = await b.reserve(c.input(c.limited, 100));
      expect(await holdsOf(b)).toEqual([[c.u.id, c.limited.id, 100, 100]]);
      await b.refund(r);
      expect(await c.balances()).toEqual({ user: 1_000_000 - 40, token: 500_000 - 40 });
      await b.stop();
    },
  );

  it('gives a dead node’s open reservations back once, and leaves a live node’s and every settled charge alone', async () => {
    const c = await caller();
    const dead = node();
    const live = node();
    // both registered; the dead one's heartbeat stopped ten minutes ago
    await s.ctx.db
      .insertInto('quota_hold_nodes')
      .values([
        { node: dead.node, seen_at: now() - 600 },
        { node: live.node, seen_at: now() },
      ])
      .execute();
    const settled = await dead.reserve(c.input(c.limited, 400));
    dead.settle(settled, { quota: 333, channelId: 0, countRequest: true });
    await dead.flush();
    // in flight when the process died: never settled
    await dead.reserve(c.input(c.limited, 250));
    await dead.reserve(c.input(c.unlimited, 90));
    await dead.reserve(c.input(null, 10));
    const onLive = await live.reserve(c.input(c.limited, 1_000));
    expect(await c.balances()).toEqual({ user: 1_000_000 - 333 - 350 - 1_000, token: 500_000 - 333 - 250 - 1_000 });

    const recoverer = node({ staleSec: 60 });
    const recovered = await recoverer.holdNodes.sweep();
    expect(recovered).toEqual([{ node: dead.node, users: 1, tokens: 1, quota: 350 }]);
    // the settled charge stays, the in-flight reservations are back, the live node's reservation is untouched
    expect(await c.balances()).toEqual({ user: 1_000_000 - 333 - 1_000, token: 500_000 - 333 - 1_000 });
    expect(await holdsOf(dead)).toEqual([]);
    expect(
      await s.ctx.db.selectFrom('quota_hold_nodes').select('node').where('node', '=', dead.node).execute(),
    ).toEqual([]);
    expect(await holdsOf(live)).toEqual([[c.u.id, c.limited.id, 1_000, 1_000]]);
    // once: a second sweep (another node's, or the next round) finds nothing
    expect(await node({ staleSec: 60 }).holdNodes.sweep()).toEqual([]);
    expect(await c.balances()).toEqual({ user: 1_000_000 - 333 - 1_000, token: 500_000 - 333 - 1_000 });
    await live.refund(onLive);
    expect(await c.balances()).toEqual({ user: 1_000_000 - 333, token: 500_000 - 333 });
  });

  it('records the reservations of a node whose rows were taken from it (taken for dead while alive) again', async () => {
    const b = node();
    const c = await caller();
    b.settle(await b.reserve(c.input(c.limited, 10)), { quota: 10, channelId: 0, countRequest: true });
    await b.flush();
    await s.ctx.db.deleteFrom('quota_holds').where('node', '=', b.node).execute();
    await s.ctx.db.deleteFrom('quota_hold_journal').where('node', '=', b.node).execute();
    const r = await b.reserve(c.input(c.limited, 40));
    const r2 = await b.reserve(c.input(c.unlimited, 5));
    expect(await holdsOf(b)).toEqual([
      [c.u.id, c.limited.id, 40, 40],
      [c.u.id, c.unlimited.id, 5, 0],
    ]);
    expect(await c.balances()).toEqual({ user: 1_000_000 - 55, token: 500_000 - 50 });
    await b.refund(r);
    await b.refund(r2);
  });
});

it('tells a node whose process on this host is gone from one that may be alive', async () => {
  const mine = newNodeId();
  const [pid, boot] = mine.split('-').slice(-3, -1);
  const host = mine.split('-').slice(0, -3).join('-');
  // another node of this very process (tests run several): alive
  expect(processGone(newNodeId())).toBe(false);
  // this pid in this namespace, but an earlier start of it: gone
  expect(processGone(`${host}-${pid}-${(parseInt(boot, 36) - 5).toString(36)}-abcd0123`)).toBe(true);
  // a process that has exited
  const exited = spawn(process.execPath, ['-e', '0']);
  await once(exited, 'exit');
  expect(processGone(`${host}-${exited.pid}-${boot}-abcd0123`)).toBe(true);
  // a live process of this host (our parent, with its own start), another host, or an id of another form: maybe alive
  const parentStart = `k.${procStat(process.ppid)!.start.toString(36)}`;
  expect(processGone(`${host}-${process.ppid}-${parentStart}-abcd0123`)).toBe(false);
  // our parent's pid with another start: the pid was taken again by another process, the node's is gone
  expect(processGone(`${host}-${process.ppid}-${boot}-abcd0123`)).toBe(true);
  // an id written with a wall-clock start (no start in ticks to compare): maybe alive
  expect(processGone(`${host}-${process.ppid}-${Math.floor(Date.now() / 1000).toString(36)}-abcd0123`)).toBe(false);
  expect(processGone(`other-host-${pid}-${(parseInt(boot, 36) - 5).toString(36)}-abcd0123`)).toBe(false);
  // the same host name in another PID namespace (containers sharing the host's name, both pid 1): maybe alive
  const otherNs = host.replace(/\.[0-9a-z]+$/, '.zzzz');
  expect(otherNs).not.toBe(host);
  expect(processGone(`${otherNs}-${pid}-${(parseInt(boot, 36) - 5).toString(36)}-abcd0123`)).toBe(false);
  expect(processGone('node-a')).toBe(false);
});

it('takes a node whose process exited but is not reaped yet (a zombie) for gone', async () => {
  const host = newNodeId().split('-').slice(0, -3).join('-');
  // the shell starts a child, then becomes `sleep`, which never waits for it: once it exits, the child is a zombie.
  // The child outlives the exec (a child that exited before it could be reaped by the shell itself: no zombie then)
  const parent = spawn('sh', ['-c', 'sleep 0.3 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
    const pid = Number(line.toString().trim());
    await waitFor(async () => procStat(pid)?.state === 'Z', 5_000);
    const start = `k.${procStat(pid)!.start.toString(36)}`;
    // signal 0 still reaches it: that alone took the node for alive
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect(processGone(`${host}-${pid}-${start}-abcd0123`)).toBe(true);
    // the live parent, with its own start: alive
    expect(processGone(`${host}-${parent.pid}-k.${procStat(parent.pid!)!.start.toString(36)}-abcd0123`)).toBe(false);
  } finally {
    parent.kill('SIGKILL');
  }
});

// A real process, killed: the reservations of its streams in flight come back when the next process starts on the
// same host and database, and every charge that was logged stays (charged + remaining = start, to the unit).
await describeEachDb('a gateway process killed with SIGKILL', (kind) => {
  it('gives back the reservations of its streams in flight when the next process starts', async () => {
    const upstream = await MockUpstream.start();
    const database = await createTestDatabase(kind);
    let child: ChildProcess | undefined;
    let restarted: TestServer | undefined;
    const reader = await openDatabase({ dsn: database.dsn, sqlitePath: database.sqlitePath });
    try {
      const START = 1_000_000;
      const seed = await startTestServer({ database });
      const u = await addUser(seed, { quota: START });
      const t = await addToken(seed, u.id, { unlimited: false, remain: START });
      await addChannel(seed, { baseUrl: upstream.url, models: ['gpt-4o-mini'] });
      await seed.close();

      // streams: one chunk, then the upstream hangs; the one JSON request completes
      const gw = await spawnGateway(database);
      child = gw.child;
      const readers = await answerOneAndHoldStreams(gw, upstream, t.key, 3);

      const quotaNow = async () =>
        Number(
          (await reader.db.selectFrom('users').select('quota').where('id', '=', u.id).executeTakeFirstOrThrow()).quota,
        );
      const logged = () => consumedQuota(reader.db, u.id);
      const held = async () =>
        (await readHolds(reader.db, { userId: u.id })).map((h) => ({
          node: h.node,
          user_quota: h.user,
          token_quota: h.token,
        }));
      // the finished request is settled and logged; what is missing from the balance is exactly what the streams hold
      await waitFor(
        async () =>
          (await logged()) > 0 &&
          (await held()).length === 1 &&
          START - (await quotaNow()) - (await logged()) === Number((await held())[0].user_quota),
        10_000,
      );
      const charged = await logged();
      const [hold] = await held();
      const pre = Number(hold.user_quota) / 3;
      expect(Number.isInteger(pre) && pre > 0).toBe(true);
      expect(Number(hold.token_quota)).toBe(3 * pre);

      await killGateway(child, readers);
      expect(await quotaNow()).toBe(START - charged - 3 * pre);

      // the next process gives them back before it serves
      restarted = await startTestServer({ database });
      expect((await userRow(restarted, u.id)).quota).toBe(START - charged);
      expect((await tokenRow(restarted, t.id)).remain_quota).toBe(START - charged);
      expect(
        await restarted.ctx.db.selectFrom('quota_holds').select('node').where('node', '=', hold.node).execute(),
      ).toEqual([]);
      expect(
        await restarted.ctx.db.selectFrom('quota_hold_journal').select('node').where('node', '=', hold.node).execute(),
      ).toEqual([]);
      expect(
        await restarted.ctx.db.selectFrom('quota_hold_nodes').select('node').where('node', '=', hold.node).execute(),
      ).toEqual([]);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await restarted?.close();
      await reader.close();
      await database.drop();
      await upstream.close();
    }
  }, 60_000);
});
