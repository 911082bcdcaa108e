// The poller's lease in Redis (REDIS_CONN_STRING set): SET NX PX takes it, only its holder renews or releases it, and
// of two holders asking at once exactly one gets it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireTaskLease, releaseTaskLease } from '../../src/services/tasks/lease.js';
import { tickTasks } from '../../src/services/tasks/poller.js';
import { redisAvailable, REDIS_URL } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const withRedis = await redisAvailable();

// Skipped only where no Redis answers on 127.0.0.1:6379; CI has one, and with CI=true a missing Redis fails the run
// (.ci/run), so it always runs there.
describe.skipIf(!withRedis)('task poller lease on Redis', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { REDIS_CONN_STRING: REDIS_URL } });
  });
  afterAll(async () => {
    const keys = s ? await s.ctx.redis!.keys(`${s.ctx.redisPrefix}*`) : [];
    if (keys.length) await s.ctx.redis!.del(...keys);
    await s?.close();
  });

  it('one of two holders gets it; the holder renews it, the other cannot until it is released', async () => {
    const got = await Promise.all([acquireTaskLease(s.ctx, 'x', 0), acquireTaskLease(s.ctx, 'y', 0)]);
    expect(got.filter(Boolean)).toHaveLength(1);
    const [winner, loser] = got[0] ? ['x', 'y'] : ['y', 'x'];
    expect(await acquireTaskLease(s.ctx, winner, 0)).toBe(true);
    expect(await acquireTaskLease(s.ctx, loser, 0)).toBe(false);
    expect((await tickTasks(s.ctx)).leased).toBe(false);
    await releaseTaskLease(s.ctx, loser);
    expect(await acquireTaskLease(s.ctx, loser, 0)).toBe(false);
    await releaseTaskLease(s.ctx, winner);
    expect((await tickTasks(s.ctx)).leased).toBe(true);
    expect(await acquireTaskLease(s.ctx, winner, 0)).toBe(false);
  });
});
