// TASK_PRICE_PATCH (new-api's list of the same name): a listed model's tasks are charged per call, ModelPrice once,
// whatever seconds and size the platform would multiply it by; a model not listed keeps its per-second price.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, setOptions } from '../relay/fixtures.js';
import { startVideoMock, type VideoMock } from './video-mock.js';

const KEY = 'sora-patch-key';

await describeEachDb('TASK_PRICE_PATCH', (kind) => {
  let tdb: TestDatabase;
  let s: TestServer;
  let mock: VideoMock;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    s = await startTestServer({ database: tdb, env: { TASK_PRICE_PATCH: ' sora-2 , other-model' } });
    mock = await startVideoMock([KEY]);
    await addChannel(s, { type: 55, key: KEY, baseUrl: mock.url, models: ['sora-2', 'sora-2-pro'] });
    await setOptions(s, { ModelPrice: { 'sora-2': 0.1, 'sora-2-pro': 0.3 } });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await mock?.close();
    await tdb?.drop();
  });

  async function charged(model: string): Promise<number> {
    const user = await addUser(s, { quota: 5_000_000 });
    const token = await addToken(s, user.id, { remain: 5_000_000, unlimited: false });
    const res = await fetch(`${s.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, prompt: 'a kite', seconds: '8', size: '1792x1024' }),
    });
    expect(res.status).toBe(200);
    await flushLogs(s);
    const u = await s.ctx.db.selectFrom('users').select('quota').where('id', '=', user.id).executeTakeFirstOrThrow();
    return 5_000_000 - Number(u.quota);
  }

  it('charges a listed model once per call, and an unlisted one per second × size', async () => {
    // 0.1 × 500000, not × 8 s × 1.666667
    expect(await charged('sora-2')).toBe(50_000);
    // 0.3 × 500000 × 8 × 1.666667 = 2000000.4 → 2000000
    expect(await charged('sora-2-pro')).toBe(2_000_000);
  });
});
