// The log writer's batched inserts on every database: each row arrives whole, whatever its strings hold. PostgreSQL
// gets the rows as one array per column (one named statement for any batch size), whose text encoding must survive
// quotes, backslashes, braces, commas and the word NULL; MySQL a VALUES list; a SQLite file its writer worker.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NewLog } from '../../src/db/schema.js';
import { relayServices } from '../../src/relay/services.js';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const AWKWARD = ['', 'NULL', 'null', '"quoted"', 'back\\slash', '{braces}', 'a,b', "it's", '模型倍率 0.075，补全倍率 4', ' padded ', 'tab\there', 'new\nline', '{"a":[1,"x"]}', '\\"'];

await describeEachDb('log inserts', (kind) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ kind });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('writes every row of a multi-batch burst exactly as given', async () => {
    const userId = 424_242;
    // more than one batch and one chunk of every path (50-row INSERTs, 128-row worker transactions)
    const rows: NewLog[] = Array.from({ length: 260 }, (_, i) => ({
      user_id: userId,
      created_at: 1_700_000_000 + i,
      type: 2,
      content: AWKWARD[i % AWKWARD.length],
      username: `user${i % 7}`,
      token_name: AWKWARD[(i + 3) % AWKWARD.length],
      model_name: 'gpt-4o-mini',
      quota: 1_000_000_000_000 + i,
      prompt_tokens: i,
      completion_tokens: 2 * i,
      use_time: i % 5,
      is_stream: i % 2 === 0,
      channel_id: 1 + (i % 3),
      token_id: 10 + i,
      group: i % 4 === 0 ? '' : 'vip',
      other: JSON.stringify({ frt: i, note: AWKWARD[(i + 5) % AWKWARD.length], admin_info: { use_channel: [1, 2] } }),
    }));
    const logs = relayServices(s.ctx).logs;
    for (const r of rows) logs.add(r);
    await logs.flush();
    const stored = await s.ctx.logDb.selectFrom('logs').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
    expect(stored).toHaveLength(rows.length);
    stored.forEach((got, i) => {
      const want = rows[i];
      expect({ ...got, id: undefined, is_stream: Boolean(got.is_stream) }).toEqual({ ...want, id: undefined });
      expect(JSON.parse(got.other)).toEqual(JSON.parse(want.other as string));
    });
  });
});
