// The poller against a strict Suno mock: tasks submitted through the gateway are asked for in one batch per channel
// with the channel's key, moved to SUCCESS with their data, or to FAILURE and refunded once (user AND token, one
// type-6 row); an id the upstream answers that nobody submitted is ignored; two gateways over one database tick
// together and only one holds the lease; a task past TASK_TIMEOUT_MINUTES is refunded once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireTaskLease } from '../../src/services/tasks/lease.js';
import { tickTasks } from '../../src/services/tasks/poller.js';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, logsOf } from '../relay/fixtures.js';
import { startSunoMock, type SunoMock } from './suno-mock.js';

const KEY = 'suno-poll-key';

await describeEachDb('suno polling', (kind) => {
  let tdb: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  let mock: SunoMock;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    a = await startTestServer({ database: tdb });
    // SQLite: one gateway per database file (see timeout.test.ts); the lease is then shown with two holders below
    b = kind === 'sqlite' ? a : await startTestServer({ database: tdb });
    mock = await startSunoMock(KEY);
    await addChannel(a, { type: 36, key: KEY, baseUrl: mock.url, models: ['suno_music', 'suno_lyrics'] });
    await channelsChanged(a);
    if (b !== a) await channelsChanged(b);
  });
  afterAll(async () => {
    if (b !== a) await b?.close();
    await a?.close();
    await mock?.close();
    await tdb?.drop();
  });

  async function submitted() {
    const user = await addUser(a, { quota: 1_000_000 });
    const token = await addToken(a, user.id, { remain: 200_000, unlimited: false, name: 'poll' });
    const res = await fetch(`${a.url}/suno/submit/music`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a waltz' }),
    });
    expect(res.status).toBe(200);
    const taskId = ((await res.json()) as { data: string }).data;
    const row = await a.ctx.db
      .selectFrom('tasks')
      .select('private_data')
      .where('task_id', '=', taskId)
      .executeTakeFirstOrThrow();
    const upstreamId = (JSON.parse(row.private_data) as { upstream_task_id: string }).upstream_task_id;
    await flushLogs(a);
    return { user, token, taskId, upstreamId };
  }

  async function balances(userId: number, tokenId: number) {
    await flushLogs(a);
    const u = await a.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
    const t = await a.ctx.db
      .selectFrom('tokens')
      .select(['remain_quota', 'used_quota'])
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    return { quota: Number(u.quota), remain: Number(t.remain_quota), tokenUsed: Number(t.used_quota) };
  }

  async function taskRow(taskId: string) {
    return a.ctx.db.selectFrom('tasks').selectAll().where('task_id', '=', taskId).executeTakeFirstOrThrow();
  }

  it('IN_PROGRESS then SUCCESS: the row follows, the data is stored and shown to its owner, the charge stays', async () => {
    const t = await submitted();
    const fetches = mock.calls.filter((c) => c.path === '/suno/fetch').length;
    mock.states.set(t.upstreamId, { status: 'IN_PROGRESS' });
    const now = nowSec();
    expect((await tickTasks(a.ctx, now)).leased).toBe(true);
    const asked = mock.calls.filter((c) => c.path === '/suno/fetch');
    expect(asked.length).toBe(fetches + 1);
    expect(asked.at(-1)!.auth).toBe(`Bearer ${KEY}`);
    expect(asked.at(-1)!.body.ids).toContain(t.upstreamId);
    expect(await taskRow(t.taskId)).toMatchObject({ status: 'IN_PROGRESS' });
    expect(Number((await taskRow(t.taskId)).start_time)).toBe(now);

    mock.states.set(t.upstreamId, { status: 'SUCCESS', data: { audio_url: 'https://cdn.example/song.mp3' } });
    await tickTasks(a.ctx, now + 15);
    const done = await taskRow(t.taskId);
    expect(done).toMatchObject({ status: 'SUCCESS', progress: '100%' });
    expect(Number(done.finish_time)).toBe(now + 15);
    const shown = await fetch(`${a.url}/suno/fetch/${t.taskId}`, {
      headers: { authorization: `Bearer sk-${t.token.key}` },
    });
    expect(((await shown.json()) as { data: unknown }).data).toMatchObject({
      status: 'SUCCESS',
      data: { audio_url: 'https://cdn.example/song.mp3' },
    });
    expect(await balances(t.user.id, t.token.id)).toEqual({ quota: 950_000, remain: 150_000, tokenUsed: 50_000 });
    // a finished task is not asked for again
    const before = mock.calls.length;
    await tickTasks(a.ctx, now + 30);
    expect(mock.calls.slice(before).some((c) => c.body?.ids?.includes(t.upstreamId))).toBe(false);
  });

  it('FAILURE while two gateways tick together: one holds the lease, the refund is made once with one type-6 row', async () => {
    const t = await submitted();
    expect(await balances(t.user.id, t.token.id)).toEqual({ quota: 950_000, remain: 150_000, tokenUsed: 50_000 });
    mock.states.set(t.upstreamId, { status: 'FAILURE', fail_reason: 'content policy' });
    const now = nowSec() + 60;
    const ticks = await Promise.all([tickTasks(a.ctx, now), tickTasks(b.ctx, now), tickTasks(a.ctx, now)]);
    // on SQLite a and b are one instance: its concurrent ticks may both run (one holder); the refund is once anyway
    if (b !== a) expect(ticks.filter((r, i) => r.leased && i !== 2).length).toBe(1);
    await tickTasks(a.ctx, now + 15);
    await tickTasks(b.ctx, now + 15);
    const row = await taskRow(t.taskId);
    expect(row).toMatchObject({ status: 'FAILURE', fail_reason: 'content policy', progress: '100%' });
    expect(await balances(t.user.id, t.token.id)).toEqual({ quota: 1_000_000, remain: 200_000, tokenUsed: 0 });
    const logs = await logsOf(a, t.user.id);
    expect(logs.map((l) => [l.type, Number(l.quota)])).toEqual([
      [2, 50_000],
      [6, 50_000],
    ]);
    expect(logs[1].otherJson).toEqual({ task_id: t.taskId, reason: 'content policy' });
  });

  it('an id the upstream answers that no task holds is ignored, and the known ones still applied', async () => {
    const t = await submitted();
    mock.states.set(t.upstreamId, { status: 'QUEUED' });
    const r = await pollTaskUpstreams(a.ctx, nowSec());
    // the mock adds `ghost-id` (FAILURE) to every answer
    expect(r.errors).toBe(0);
    expect(r.ignored).toBeGreaterThanOrEqual(1);
    expect(r.failed).toBe(0);
    expect(await taskRow(t.taskId)).toMatchObject({ status: 'QUEUED' });
    expect(await balances(t.user.id, t.token.id)).toEqual({ quota: 950_000, remain: 150_000, tokenUsed: 50_000 });
    mock.states.set(t.upstreamId, { status: 'SUCCESS' });
    await pollTaskUpstreams(a.ctx, nowSec());
  });

  it('two holders asking for the lease at once: exactly one gets it; the other gets it once it expires', async () => {
    const now = nowSec() + 100_000;
    const got = await Promise.all([acquireTaskLease(a.ctx, 'holder-x', now), acquireTaskLease(b.ctx, 'holder-y', now)]);
    expect(got.filter(Boolean)).toHaveLength(1);
    const [winner, loser] = got[0] ? ['holder-x', 'holder-y'] : ['holder-y', 'holder-x'];
    expect(await acquireTaskLease(a.ctx, winner, now)).toBe(true);
    expect(await acquireTaskLease(a.ctx, loser, now + 10)).toBe(false);
    expect(await acquireTaskLease(a.ctx, loser, now + 1000)).toBe(true);
    expect(await acquireTaskLease(a.ctx, winner, now + 1000)).toBe(false);
  });

  it('a task past TASK_TIMEOUT_MINUTES is failed and refunded once, its upstream never answering', async () => {
    const t = await submitted();
    mock.states.delete(t.upstreamId);
    // past the holders of the test above, and past the default 1440 minutes
    const later = nowSec() + 200_000;
    await Promise.all([tickTasks(a.ctx, later), tickTasks(b.ctx, later)]);
    await tickTasks(a.ctx, later + 15);
    await tickTasks(b.ctx, later + 15);
    expect(await taskRow(t.taskId)).toMatchObject({ status: 'FAILURE', fail_reason: '任务超时' });
    expect(await balances(t.user.id, t.token.id)).toEqual({ quota: 1_000_000, remain: 200_000, tokenUsed: 0 });
    const logs = await logsOf(a, t.user.id);
    expect(logs.map((l) => l.type)).toEqual([2, 6]);
  });
});
