// An upstream's fetch answer applied to the task rows: unknown ids ignored, a FAILURE refunded once even when the
// answer comes again, a SUCCESS final (a later FAILURE for it changes and refunds nothing).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { applyFetchedStates, type PolledTask } from '../../src/services/tasks/apply.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addToken, addUser } from '../relay/fixtures.js';

const NOW = 2_000_000_000;

await describeEachDb('fetched task states', (kind) => {
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

  it('ignores unknown ids, refunds a FAILURE once, and keeps a SUCCESS final', async () => {
    const user = await addUser(s, { quota: 1000 });
    const token = await addToken(s, user.id, { remain: 500, unlimited: false, name: 'tk' });
    const tasks: PolledTask[] = [];
    for (const up of ['up-a', 'up-b', 'up-c']) {
      const privateData = JSON.stringify({ upstream_task_id: `${up}-${kind}`, token_id: token.id });
      await s.ctx.db
        .insertInto('tasks')
        .values({
          task_id: `task_${up}_${kind}`,
          platform: 'suno',
          user_id: user.id,
          quota: 100,
          action: 'MUSIC',
          status: 'SUBMITTED',
          private_data: privateData,
        })
        .execute();
      const row = await s.ctx.db
        .selectFrom('tasks')
        .select(['id', 'private_data'])
        .where('task_id', '=', `task_${up}_${kind}`)
        .executeTakeFirstOrThrow();
      tasks.push({ id: Number(row.id), private_data: row.private_data });
    }
    const answer = [
      { upstreamId: `up-a-${kind}`, status: 'FAILURE', failReason: 'moderation', data: null },
      { upstreamId: `up-b-${kind}`, status: 'SUCCESS', failReason: '', data: [{ audio_url: 'https://x/a.mp3' }] },
      { upstreamId: `up-c-${kind}`, status: 'IN_PROGRESS', failReason: '', data: [] },
      { upstreamId: 'never-submitted-here', status: 'FAILURE', failReason: 'x', data: null },
    ];
    expect(await applyFetchedStates(s.ctx, tasks, answer, NOW)).toEqual({ changed: 2, failed: 1, ignored: 1 });
    // the same answer again, and a FAILURE for the task that succeeded: nothing more
    const late = [...answer, { upstreamId: `up-b-${kind}`, status: 'FAILURE', failReason: 'late', data: null }];
    expect(await applyFetchedStates(s.ctx, tasks, late, NOW + 15)).toEqual({ changed: 1, failed: 0, ignored: 1 });

    const rows = await s.ctx.db
      .selectFrom('tasks')
      .select(['task_id', 'status', 'progress', 'fail_reason', 'start_time', 'finish_time'])
      .where('user_id', '=', user.id)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => ({ ...r, start_time: Number(r.start_time), finish_time: Number(r.finish_time) }))).toEqual([
      {
        task_id: `task_up-a_${kind}`,
        status: 'FAILURE',
        progress: '100%',
        fail_reason: 'moderation',
        start_time: 0,
        finish_time: NOW,
      },
      {
        task_id: `task_up-b_${kind}`,
        status: 'SUCCESS',
        progress: '100%',
        fail_reason: '',
        start_time: NOW,
        finish_time: NOW,
      },
      {
        task_id: `task_up-c_${kind}`,
        status: 'IN_PROGRESS',
        progress: '',
        fail_reason: '',
        start_time: NOW,
        finish_time: 0,
      },
    ]);
    const u = await s.ctx.db.selectFrom('users').select('quota').where('id', '=', user.id).executeTakeFirstOrThrow();
    const t = await s.ctx.db
      .selectFrom('tokens')
      .select('remain_quota')
      .where('id', '=', token.id)
      .executeTakeFirstOrThrow();
    expect({ user: Number(u.quota), token: Number(t.remain_quota) }).toEqual({ user: 1100, token: 600 });
    const refunds = await s.ctx.logDb
      .selectFrom('logs')
      .select(['type', 'quota'])
      .where('user_id', '=', user.id)
      .execute();
    expect(refunds.map((l) => ({ type: l.type, quota: Number(l.quota) }))).toEqual([{ type: 6, quota: 100 }]);
  });
});
