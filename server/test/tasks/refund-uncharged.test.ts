// A task submitted here whose charge never committed (a crash between the task row and the settlement that carries
// its consume log row) is not refunded: there is nothing to give back. One whose consume row exists is refunded once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { failTaskWithRefund } from '../../src/services/tasks/refund.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addUser } from '../relay/fixtures.js';

await describeEachDb('task refunds need the charge', (kind) => {
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

  async function submittedTask(charged: boolean) {
    const user = await addUser(s, { quota: 1000 });
    const taskId = `task_${user.username}x`;
    const now = Math.floor(Date.now() / 1000);
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
        submit_time: now,
        private_data: JSON.stringify({ token_id: 0, model_name: 'suno_music', charge_logged: true }),
      })
      .execute();
    if (charged)
      await s.ctx.logDb
        .insertInto('logs')
        .values({
          user_id: user.id,
          username: user.username,
          created_at: now,
          type: 2,
          content: '',
          model_name: 'suno_music',
          quota: 300,
          other: JSON.stringify({ model_price: 0.6, is_task: true, task_id: taskId }),
        })
        .execute();
    const row = await s.ctx.db.selectFrom('tasks').select('id').where('task_id', '=', taskId).executeTakeFirstOrThrow();
    return { user, id: Number(row.id) };
  }

  const quotaOf = async (userId: number) =>
    Number(
      (await s.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow()).quota,
    );
  const refunds = async (userId: number) =>
    (await s.ctx.logDb.selectFrom('logs').select('type').where('user_id', '=', userId).where('type', '=', 6).execute())
      .length;

  it('fails a task whose charge never committed without crediting anything', async () => {
    const t = await submittedTask(false);
    expect(await failTaskWithRefund(s.ctx, { id: t.id, reason: 'upstream failed' })).toBe(true);
    expect(await quotaOf(t.user.id)).toBe(1000);
    expect(await refunds(t.user.id)).toBe(0);
    const row = await s.ctx.db.selectFrom('tasks').select('status').where('id', '=', t.id).executeTakeFirstOrThrow();
    expect(row.status).toBe('FAILURE');
  });

  it('refunds a task whose consume row names it, once', async () => {
    const t = await submittedTask(true);
    expect(await failTaskWithRefund(s.ctx, { id: t.id, reason: 'upstream failed' })).toBe(true);
    expect(await failTaskWithRefund(s.ctx, { id: t.id, reason: 'upstream failed' })).toBe(false);
    expect(await quotaOf(t.user.id)).toBe(1300);
    expect(await refunds(t.user.id)).toBe(1);
  });
});
