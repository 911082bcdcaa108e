// A gateway process killed with SIGKILL between a drawing's submit and its completion: the charge made at submit stays
// (it was committed before the client got the task id), the next process neither refunds the running task nor loses
// the charge, and its poller takes the task to SUCCESS without a refund row.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { expect, it } from 'vitest';
import { nowSec } from '../../src/lib/time.js';
import { pollMidjourney } from '../../src/relay/tasks/mj-poll.js';
import { createTestDatabase, describeEachDb } from '../helpers/databases.js';
import { MjProxyMock } from '../helpers/mj-proxy-mock.js';
import { spawnGateway } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, logsOf, tokenRow, userRow } from '../relay/fixtures.js';

const SECRET = 'mj-crash-secret';

await describeEachDb('a gateway killed while a drawing runs', (kind) => {
  it('keeps the charge, refunds nothing for the running task, and finishes it after the restart', async () => {
    const mock = await MjProxyMock.start({ secret: SECRET });
    const database = await createTestDatabase(kind);
    let child: ChildProcess | undefined;
    let restarted: TestServer | undefined;
    try {
      const START = 1_000_000;
      const seed = await startTestServer({ database });
      const u = await addUser(seed, { quota: START });
      const t = await addToken(seed, u.id, { unlimited: false, remain: START });
      await addChannel(seed, { type: 2, key: SECRET, baseUrl: mock.url, models: ['mj_imagine'] });
      await seed.close();

      const gw = await spawnGateway(database);
      child = gw.child;
      const res = await fetch(`${gw.url}/mj/submit/imagine`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'before the crash' }),
      });
      const body = (await res.json()) as { code: number; result: string };
      expect(body.code).toBe(1);
      mock.advance(body.result);
      mock.advance(body.result);
      child.kill('SIGKILL');
      await once(child, 'exit');

      restarted = await startTestServer({ database });
      const charged = START - 50_000;
      expect(Number((await userRow(restarted, u.id)).quota)).toBe(charged);
      expect(Number((await tokenRow(restarted, t.id)).remain_quota)).toBe(charged);
      await pollMidjourney(restarted.ctx, nowSec());
      const row = () =>
        restarted!.ctx.db
          .selectFrom('midjourneys')
          .select(['status', 'progress', 'quota'])
          .where('mj_id', '=', body.result)
          .executeTakeFirstOrThrow();
      expect(await row()).toMatchObject({ status: 'IN_PROGRESS', progress: '50%' });
      mock.advance(body.result);
      await pollMidjourney(restarted.ctx, nowSec());
      expect(await row()).toMatchObject({ status: 'SUCCESS', progress: '100%' });
      expect(Number((await userRow(restarted, u.id)).quota)).toBe(charged);
      expect(Number((await tokenRow(restarted, t.id)).remain_quota)).toBe(charged);
      expect((await logsOf(restarted, u.id)).map((l) => [l.type, Number(l.quota)])).toEqual([[2, 50_000]]);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await restarted?.close();
      await database.drop();
      await mock.close();
    }
  }, 60_000);
});
