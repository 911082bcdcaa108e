// A task settled at completion with LOG_SQL_DSN (the logs in another database): the balances change in the main
// database's transaction, the settlement's log row follows the commit in the log database, once under two polls.
import { describe, expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { createTestDatabase, dbAvailable } from '../helpers/databases.js';
import { startTestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, logsOf, setOptions } from '../relay/fixtures.js';
import { startKlingMock } from './kling-mock.js';

const PAIR = 'ak-logdb|sk-logdb-secret';

// the log database is a PostgreSQL one beside the main SQLite database: skipped where no PostgreSQL server runs (the
// Node 26 pass, SQLite only); CI's main pass has one and runs it
describe.skipIf(!(await dbAvailable('postgres')))('task settlement with a separate LOG_SQL_DSN database', () => {
  it('the refund row is written in the log database after the commit, once', async () => {
    const logDatabase = await createTestDatabase('postgres');
    const s = await startTestServer({ kind: 'sqlite', env: { LOG_SQL_DSN: logDatabase.dsn } });
    const kling = await startKlingMock([PAIR]);
    try {
      await addChannel(s, { type: 50, key: PAIR, baseUrl: kling.url, models: ['kling-ratio'] });
      await setOptions(s, { ModelRatio: { 'kling-ratio': 0.4 } });
      await channelsChanged(s);
      const user = await addUser(s, { quota: 1_000_000 });
      const token = await addToken(s, user.id, { remain: 500_000, unlimited: false });
      const res = await fetch(`${s.url}/v1/video/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'kling-ratio', prompt: 'a lighthouse' }),
      });
      const body = (await res.json()) as { id: string };
      expect(res.status, JSON.stringify(body)).toBe(200);
      const row = await s.ctx.db
        .selectFrom('tasks')
        .select(['private_data'])
        .where('task_id', '=', body.id)
        .executeTakeFirstOrThrow();
      const upstreamId = (JSON.parse(row.private_data) as { upstream_task_id: string }).upstream_task_id;
      kling.states.set(upstreamId, { status: 'succeed', url: 'https://cdn.test/l.mp4', finalUnits: '10' });
      await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
      // 10 × 0.4 = 4 of the 100000 estimate
      const u = await s.ctx.db.selectFrom('users').select('quota').where('id', '=', user.id).executeTakeFirstOrThrow();
      expect(Number(u.quota)).toBe(1_000_000 - 4);
      // the consume row is batched by the log writer: it may land after the settlement's
      const logs = (await logsOf(s, user.id)).sort((a, b) => a.type - b.type);
      expect(logs.map((l) => [l.type, Number(l.quota)])).toEqual([
        [2, 100_000],
        [6, 100_000 - 4],
      ]);
      expect(logs[1].otherJson).toMatchObject({ task_id: body.id, pre_consumed_quota: 100_000, actual_quota: 4 });
      expect(await s.ctx.db.selectFrom('logs').select('id').execute()).toEqual([]);
    } finally {
      await s.close();
      await kling.close();
      await logDatabase.drop();
    }
  });
});
