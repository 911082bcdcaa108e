// A failed asynchronous task gives its charge back exactly once, to the user and to the token, with one refund log
// row (type 6, other {task_id, reason}); a finished task is never refunded.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { failTaskWithRefund } from '../../src/services/tasks/refund.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addToken, addUser } from '../relay/fixtures.js';

await describeEachDb('task refunds', (kind) => {
  let tdb: TestDatabase;
  let s: TestServer;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    s = await startTestServer({ database: tdb });
  });
  afterAll(async () => {
    await s?.close();
    await tdb?.drop();
  });

  async function chargedTask(status: string) {
    const user = await addUser(s, { quota: 1000 });
    const token = await addToken(s, user.id, { remain: 500, unlimited: false, name: 'tk' });
    await s.ctx.db.updateTable('tokens').set({ used_quota: 300 }).where('id', '=', token.id).execute();
    const taskId = `task_${user.username}`;
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
        status,
        private_data: JSON.stringify({ token_id: token.id, token_name: 'tk', model_name: 'suno_music' }),
      })
      .execute();
    const row = await s.ctx.db.selectFrom('tasks').select('id').where('task_id', '=', taskId).executeTakeFirstOrThrow();
    return { user, token, taskId, id: Number(row.id) };
  }

  async function balances(userId: number, tokenId: number) {
    const u = await s.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
    const t = await s.ctx.db
      .selectFrom('tokens')
      .select(['remain_quota', 'used_quota'])
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    return { user: Number(u.quota), remain: Number(t.remain_quota), used: Number(t.used_quota) };
  }

  async function refundRows(userId: number) {
    const rows = await s.ctx.logDb
      .selectFrom('logs')
      .select(['type', 'quota', 'token_id', 'token_name', 'model_name', 'channel_id', 'other'])
      .where('user_id', '=', userId)
      .execute();
    return rows.map((r) => ({
      ...r,
      quota: Number(r.quota),
      token_id: Number(r.token_id),
      channel_id: Number(r.channel_id),
    }));
  }

  it('two concurrent failures of the same task refund once, to the user and the token, with one type-6 row', async () => {
    const t = await chargedTask('IN_PROGRESS');
    const won = await Promise.all([
      failTaskWithRefund(s.ctx, { id: t.id, reason: 'upstream failed' }),
      failTaskWithRefund(s.ctx, { id: t.id, reason: 'upstream failed' }),
    ]);
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await failTaskWithRefund(s.ctx, { id: t.id, reason: 'again' })).toBe(false);
    expect(await balances(t.user.id, t.token.id)).toEqual({ user: 1300, remain: 800, used: 0 });
    expect(await refundRows(t.user.id)).toEqual([
      {
        type: 6,
        quota: 300,
        token_id: t.token.id,
        token_name: 'tk',
        model_name: 'suno_music',
        channel_id: 9,
        other: JSON.stringify({ task_id: t.taskId, reason: 'upstream failed' }),
      },
    ]);
    const task = await s.ctx.db
      .selectFrom('tasks')
      .select(['status', 'progress', 'fail_reason'])
      .where('id', '=', t.id)
      .executeTakeFirstOrThrow();
    expect(task).toEqual({ status: 'FAILURE', progress: '100%', fail_reason: 'upstream failed' });
  });

  it('a task that succeeded is neither failed nor refunded', async () => {
    const t = await chargedTask('SUCCESS');
    expect(await failTaskWithRefund(s.ctx, { id: t.id, reason: 'late' })).toBe(false);
    expect(await balances(t.user.id, t.token.id)).toEqual({ user: 1000, remain: 500, used: 300 });
    expect(await refundRows(t.user.id)).toEqual([]);
    const task = await s.ctx.db.selectFrom('tasks').select('status').where('id', '=', t.id).executeTakeFirstOrThrow();
    expect(task.status).toBe('SUCCESS');
  });
});
