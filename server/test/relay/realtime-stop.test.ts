// A realtime session when the gateway stops (docs/decisions/0014-realtime-billing.md): a clean stop closes the client
// with 1001 and settles the completed turns with their one log row; a process killed with SIGKILL mid-session keeps
// the completed turns' price (it is no longer a hold) and the next process gives back only the next turn's headroom.
import { once } from 'node:events';
import { expect, it } from 'vitest';
import { createTestDatabase, describeEachDb } from '../helpers/databases.js';
import { MockRealtime, type RealtimeUsageSpec } from '../helpers/mock-realtime.js';
import { spawnGateway } from '../helpers/process.js';
import { connect, send } from '../helpers/realtime-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { openDatabase } from '../../src/db/connect.js';
import { readHolds } from '../../src/services/quota-holds.js';
import {
  addChannel,
  addToken,
  channelsChanged,
  addUser,
  logsOf,
  setOptions,
  tokenRow,
  userRow,
  waitFor,
} from './fixtures.js';

const MODEL = 'gpt-4o-realtime-preview-2024-12-17';
const START = 1_000_000;
/** text only, model ratio 1: 100 in + 50 out × gpt-4o's completion ratio 4 */
const TURN: RealtimeUsageSpec = {
  input_tokens: 100,
  output_tokens: 50,
  input_token_details: { text_tokens: 100, audio_tokens: 0, cached_tokens: 0 },
  output_token_details: { text_tokens: 50, audio_tokens: 0 },
};
const TURN_QUOTA = 300;
/** one turn's reservation: PreConsumedQuota (500) × model ratio 1 */
const HEADROOM = 500;

async function seed(database: Awaited<ReturnType<typeof createTestDatabase>>, upstream: MockRealtime) {
  const s = await startTestServer({ database });
  await setOptions(s, { ModelRatio: { [MODEL]: 1 }, CompletionRatio: { [MODEL]: 4 } });
  const u = await addUser(s, { quota: START });
  const t = await addToken(s, u.id, { unlimited: false, remain: START });
  await addChannel(s, { type: 1, key: upstream.key, baseUrl: upstream.url, models: [MODEL] });
  await channelsChanged(s);
  return { s, u, t };
}

await describeEachDb('a realtime session when the gateway stops', (kind) => {
  it('a clean stop closes the session with 1001 and settles its completed turns once', async () => {
    const upstream = await MockRealtime.start('sk-up');
    const database = await createTestDatabase(kind);
    let restarted: TestServer | undefined;
    try {
      const { s, u, t } = await seed(database, upstream);
      upstream.turns = [TURN, TURN];
      const c = await connect(s.url, MODEL, t.key);
      send(c, { type: 'response.create' });
      await c.next('response.done');
      send(c, { type: 'response.create' });
      await c.next('response.done', 2);
      await s.close(5_000);
      expect(await c.closed).toBe(1001);
      restarted = await startTestServer({ database });
      const logs = (await logsOf(restarted, u.id)).filter((l) => l.type === 2);
      expect(logs.map((l) => l.quota)).toEqual([2 * TURN_QUOTA]);
      expect((await userRow(restarted, u.id)).quota).toBe(START - 2 * TURN_QUOTA);
      expect((await tokenRow(restarted, t.id)).remain_quota).toBe(START - 2 * TURN_QUOTA);
      expect(await readHolds(restarted.ctx.db, { userId: u.id })).toEqual([]);
    } finally {
      await restarted?.close();
      await database.drop();
      await upstream.close();
    }
  }, 120_000);

  it('a process killed mid-session loses no completed turn: only the next turn’s hold comes back', async () => {
    const upstream = await MockRealtime.start('sk-up');
    const database = await createTestDatabase(kind);
    let restarted: TestServer | undefined;
    const reader = await openDatabase({ dsn: database.dsn, sqlitePath: database.sqlitePath });
    const gw = await (async () => {
      const { s, u, t } = await seed(database, upstream);
      await s.close();
      return { u, t, p: await spawnGateway(database) };
    })();
    try {
      upstream.turns = [TURN];
      const c = await connect(gw.p.url, MODEL, gw.t.key);
      send(c, { type: 'response.create' });
      await c.next('response.done');
      // the completed turn's price and the next turn's headroom are off the balance; only the headroom is a hold
      // the balance read first: once it shows the grown reservation, the holds read after it are the final ones (read
      // the other way round, holds from before the keep and a balance from after the grow looked settled)
      await waitFor(async () => {
        const user = await reader.db.selectFrom('users').select('quota').where('id', '=', gw.u.id).executeTakeFirst();
        const h = await readHolds(reader.db, { userId: gw.u.id });
        return (
          Number(user?.quota) === START - TURN_QUOTA - HEADROOM && h.length === 1 && Number(h[0].user) === HEADROOM
        );
      }, 10_000);
      gw.p.child.kill('SIGKILL');
      await once(gw.p.child, 'exit');
      c.ws.terminate();
      restarted = await startTestServer({ database });
      // the next process gave back the headroom; the completed turn stays charged (its log row died with the process)
      expect((await userRow(restarted, gw.u.id)).quota).toBe(START - TURN_QUOTA);
      expect((await tokenRow(restarted, gw.t.id)).remain_quota).toBe(START - TURN_QUOTA);
      expect(await readHolds(restarted.ctx.db, { userId: gw.u.id })).toEqual([]);
    } finally {
      if (gw.p.child.exitCode === null && gw.p.child.signalCode === null) gw.p.child.kill('SIGKILL');
      await restarted?.close();
      await reader.close();
      await database.drop();
      await upstream.close();
    }
  }, 120_000);
});
