// The poller's tick fails and refunds the tasks left unfinished longer than TASK_TIMEOUT_MINUTES, once even when two
// gateway instances over the same database tick at the same moment; younger and finished tasks are left alone.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tickTasks } from '../../src/services/tasks/poller.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addToken, addUser } from '../relay/fixtures.js';

const NOW = 2_000_000_000; // the injected clock, in seconds
const TIMEOUT_MIN = 10;

await describeEachDb('task timeouts', (kind) => {
  let tdb: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    const env = { TASK_TIMEOUT_MINUTES: String(TIMEOUT_MIN) };
    a = await startTestServer({ database: tdb, env });
    // SQLite: one gateway per database file, and a second connection in this process would wait for the first one's
    // lock while blocking the thread that holds it; there the two ticks run concurrently in the one instance
    b = kind === 'sqlite' ? a : await startTestServer({ database: tdb, env });
  });
  afterAll(async () => {
    if (b !== a) await b?.close();
    await a?.close();
    await tdb?.drop();
  });

  async function task(userId: number, tokenId: number, taskId: string, status: string, submitTime: number) {
    await a.ctx.db
      .insertInto('tasks')
      .values({
        task_id: taskId,
        platform: 'suno',
        user_id: userId,
        quota: 250,
        action: 'MUSIC',
        status,
        submit_time: submitTime,
        private_data: JSON.stringify({ token_id: tokenId, token_name: 'tk', model_name: 'suno_music' }),
      })
      .execute();
  }

  async function state(taskId: string) {
    return a.ctx.db
      .selectFrom('tasks')
      .select(['status', 'fail_reason'])
      .where('task_id', '=', taskId)
      .executeTakeFirstOrThrow();
  }

  it('two instances ticking together refund a timed-out task once; a young or finished task stays', async () => {
    const user = await addUser(a, { quota: 1000 });
    const token = await addToken(a, user.id, { remain: 500, unlimited: false, name: 'tk' });
    const old = NOW - TIMEOUT_MIN * 60 - 1;
    await task(user.id, token.id, `task_old_${kind}`, 'IN_PROGRESS', old);
    await task(user.id, token.id, `task_young_${kind}`, 'SUBMITTED', NOW - TIMEOUT_MIN * 60 + 5);
    await task(user.id, token.id, `task_done_${kind}`, 'SUCCESS', old);

    const [ra, rb] = await Promise.all([tickTasks(a.ctx, NOW), tickTasks(b.ctx, NOW)]);
    expect(ra.timedOut + rb.timedOut).toBe(1);
    expect((await tickTasks(a.ctx, NOW)).timedOut).toBe(0);

    expect(await state(`task_old_${kind}`)).toEqual({ status: 'FAILURE', fail_reason: '任务超时' });
    expect(await state(`task_young_${kind}`)).toEqual({ status: 'SUBMITTED', fail_reason: '' });
    expect(await state(`task_done_${kind}`)).toEqual({ status: 'SUCCESS', fail_reason: '' });
    const u = await a.ctx.db.selectFrom('users').select('quota').where('id', '=', user.id).executeTakeFirstOrThrow();
    const t = await a.ctx.db
      .selectFrom('tokens')
      .select('remain_quota')
      .where('id', '=', token.id)
      .executeTakeFirstOrThrow();
    expect({ user: Number(u.quota), token: Number(t.remain_quota) }).toEqual({ user: 1250, token: 750 });
    const logs = await a.ctx.logDb
      .selectFrom('logs')
      .select(['type', 'quota', 'other'])
      .where('user_id', '=', user.id)
      .execute();
    expect(logs.map((l) => ({ ...l, quota: Number(l.quota) }))).toEqual([
      { type: 6, quota: 250, other: JSON.stringify({ task_id: `task_old_${kind}`, reason: '任务超时' }) },
    ]);
  });
});
