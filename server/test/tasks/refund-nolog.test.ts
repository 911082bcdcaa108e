// With LogConsumeEnabled off no consume log row proves a task's charge: the task row (tasks.private_data) or the
// drawing's row (midjourneys.private_data) does, written once the charge committed. A Suno task and a Midjourney
// drawing submitted through the gateway that FAIL are refunded once, to the user AND the token, with one type-6 row;
// a row whose charge never committed (or whose commit was never confirmed) is failed without a refund.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { nowSec } from '../../src/lib/time.js';
import { pollMidjourney } from '../../src/relay/tasks/mj-poll.js';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { applyMjChange } from '../../src/services/tasks/mj-apply.js';
import { failTaskWithRefund } from '../../src/services/tasks/refund.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { MjProxyMock } from '../helpers/mj-proxy-mock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, logsOf, setOptions } from '../relay/fixtures.js';
import { startSunoMock, type SunoMock } from './suno-mock.js';

const SUNO_KEY = 'suno-nolog-key';
const MJ_SECRET = 'mj-nolog-secret';

await describeEachDb('task refunds with consume logs off', (kind) => {
  let tdb: TestDatabase;
  let s: TestServer;
  let suno: SunoMock;
  let mj: MjProxyMock;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    s = await startTestServer({ database: tdb });
    suno = await startSunoMock(SUNO_KEY);
    mj = await MjProxyMock.start({ secret: MJ_SECRET });
    await addChannel(s, { type: 36, key: SUNO_KEY, baseUrl: suno.url, models: ['suno_music', 'suno_lyrics'] });
    await addChannel(s, { type: 2, key: MJ_SECRET, baseUrl: mj.url, models: ['mj_imagine'] });
    await channelsChanged(s);
    await setOptions(s, { LogConsumeEnabled: false });
  });
  afterAll(async () => {
    await s?.close();
    await suno?.close();
    await mj?.close();
    await tdb?.drop();
  });

  async function caller() {
    const user = await addUser(s, { quota: 1_000_000 });
    const token = await addToken(s, user.id, { remain: 200_000, unlimited: false, name: 'nolog' });
    return { user, token };
  }

  async function balances(userId: number, tokenId: number) {
    await flushLogs(s);
    const u = await s.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
    const t = await s.ctx.db
      .selectFrom('tokens')
      .select(['remain_quota', 'used_quota'])
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    return { quota: Number(u.quota), remain: Number(t.remain_quota), tokenUsed: Number(t.used_quota) };
  }

  const post = (path: string, key: string, body: unknown) =>
    fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('a Suno task that FAILS is refunded once, to the user and the token, with one type-6 row', async () => {
    const { user, token } = await caller();
    const res = await post('/suno/submit/music', token.key, { prompt: 'a quiet tune' });
    expect(res.status).toBe(200);
    const taskId = ((await res.json()) as { data: string }).data;
    expect(await balances(user.id, token.id)).toEqual({ quota: 950_000, remain: 150_000, tokenUsed: 50_000 });
    // no consume row; the task row says the charge committed, without a log row to prove it
    expect(await logsOf(s, user.id)).toEqual([]);
    const row = await s.ctx.db
      .selectFrom('tasks')
      .select(['id', 'quota', 'private_data'])
      .where('task_id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect(Number(row.quota)).toBe(50_000);
    const priv = JSON.parse(row.private_data) as Record<string, unknown>;
    expect(priv).toMatchObject({ charge_logged: false, token_id: token.id, model_name: 'suno_music' });
    expect(priv).not.toHaveProperty('charge_pending');

    suno.states.set(String(priv.upstream_task_id), { status: 'FAILURE', fail_reason: 'content policy' });
    const now = nowSec() + 60;
    const polls = await Promise.all([pollTaskUpstreams(s.ctx, now), pollTaskUpstreams(s.ctx, now)]);
    expect(polls.reduce((n, p) => n + p.failed, 0)).toBe(1);
    await pollTaskUpstreams(s.ctx, now + 15);
    expect(await failTaskWithRefund(s.ctx, { id: Number(row.id), reason: 'again' })).toBe(false);
    expect(await balances(user.id, token.id)).toEqual({ quota: 1_000_000, remain: 200_000, tokenUsed: 0 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), Number(l.token_id), l.token_name])).toEqual([
      [6, 50_000, token.id, 'nolog'],
    ]);
    expect(logs[0].otherJson).toEqual({ task_id: taskId, reason: 'content policy' });
  });

  it('a Midjourney drawing that FAILS is refunded once, to the user and the token, with one type-6 row', async () => {
    const { user, token } = await caller();
    const res = await post('/mj/submit/imagine', token.key, { prompt: 'a lighthouse at dusk' });
    const body = (await res.json()) as { code: number; result: string };
    expect(body.code).toBe(1);
    expect(await balances(user.id, token.id)).toEqual({ quota: 950_000, remain: 150_000, tokenUsed: 50_000 });
    expect(await logsOf(s, user.id)).toEqual([]);
    const row = await s.ctx.db
      .selectFrom('midjourneys')
      .select(['quota', 'private_data'])
      .where('mj_id', '=', body.result)
      .executeTakeFirstOrThrow();
    expect(Number(row.quota)).toBe(50_000);
    expect(JSON.parse(row.private_data)).toEqual({
      charge_logged: false,
      token_id: token.id,
      token_name: 'nolog',
      model_name: 'mj_imagine',
    });
    // the client never sees who paid
    const dto = await fetch(`${s.url}/mj/task/${body.result}/fetch`, {
      headers: { authorization: `Bearer sk-${token.key}` },
    });
    expect(JSON.stringify(await dto.json())).not.toContain('charge_logged');

    mj.advance(body.result, 'banned prompt');
    const now = nowSec();
    const polls = await Promise.all([pollMidjourney(s.ctx, now), pollMidjourney(s.ctx, now)]);
    expect(polls.reduce((n, p) => n + p.refunded, 0)).toBe(1);
    await pollMidjourney(s.ctx, now + 15);
    expect(await balances(user.id, token.id)).toEqual({ quota: 1_000_000, remain: 200_000, tokenUsed: 0 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), Number(l.token_id), l.token_name, l.model_name])).toEqual([
      [6, 50_000, token.id, 'nolog', 'mj_imagine'],
    ]);
    expect(logs[0].otherJson).toEqual({ task_id: body.result, reason: '构图失败' });
  });

  it('a Suno task whose charge was never confirmed committed is failed without a refund', async () => {
    const { user, token } = await caller();
    const taskId = `task_${user.username}p`;
    // as the submit writes it before the settlement's flush (a crash before the flush, or before the mark after it)
    await s.ctx.db
      .insertInto('tasks')
      .values({
        task_id: taskId,
        platform: 'suno',
        user_id: user.id,
        group: 'default',
        channel_id: 9,
        quota: 300,
        action: 'MUSIC',
        status: 'IN_PROGRESS',
        submit_time: nowSec(),
        private_data: JSON.stringify({
          token_id: token.id,
          model_name: 'suno_music',
          charge_logged: false,
          charge_pending: true,
        }),
      })
      .execute();
    const row = await s.ctx.db.selectFrom('tasks').select('id').where('task_id', '=', taskId).executeTakeFirstOrThrow();
    expect(await failTaskWithRefund(s.ctx, { id: Number(row.id), reason: 'upstream failed' })).toBe(true);
    expect(await balances(user.id, token.id)).toEqual({ quota: 1_000_000, remain: 200_000, tokenUsed: 0 });
    expect(await logsOf(s, user.id)).toEqual([]);
    const after = await s.ctx.db
      .selectFrom('tasks')
      .select('status')
      .where('id', '=', row.id)
      .executeTakeFirstOrThrow();
    expect(after.status).toBe('FAILURE');
  });

  it('a drawing whose charge was never confirmed committed is failed without a refund', async () => {
    const { user, token } = await caller();
    const submitMs = Date.now();
    // the row as the submit inserts it: private_data is written only after the charge's flush
    await s.ctx.db
      .insertInto('midjourneys')
      .values({
        user_id: user.id,
        action: 'IMAGINE',
        mj_id: `${user.id}000`,
        status: 'SUBMITTED',
        progress: '0%',
        submit_time: submitMs,
        channel_id: 9,
        quota: 300,
      })
      .execute();
    const row = await s.ctx.db
      .selectFrom('midjourneys')
      .select('id')
      .where('mj_id', '=', `${user.id}000`)
      .executeTakeFirstOrThrow();
    const outcome = await applyMjChange(
      s.ctx,
      {
        id: Number(row.id),
        mj_id: `${user.id}000`,
        user_id: user.id,
        channel_id: 9,
        quota: 300,
        submit_time: submitMs,
      },
      { set: { status: 'FAILURE', progress: '100%' }, expectStatus: 'SUBMITTED', refund: true },
      nowSec(),
    );
    expect(outcome).toBe('changed');
    expect(await balances(user.id, token.id)).toEqual({ quota: 1_000_000, remain: 200_000, tokenUsed: 0 });
    expect(await logsOf(s, user.id)).toEqual([]);
  });
});
