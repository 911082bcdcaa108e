// Channel types 2 (Midjourney Proxy), 5 (Midjourney Proxy Plus) and 36 (Suno API): the console creates and edits them
// with a required base URL and their built-in models; the channel test answers that they have no chat test (new-api's
// message) without sending anything.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { startConsole } from './fixture.js';

await describeEachDb('task platform channel types', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
  });
  afterAll(async () => server?.close());

  const CASES: Array<[number, string, string]> = [
    [2, 'mj_imagine', 'midjourney channel test is not supported'],
    [5, 'mj_imagine,swap_face', 'midjourney plus channel test is not supported'],
    [36, 'suno_music,suno_lyrics', 'suno channel test is not supported'],
  ];

  it('creates each with its base URL and models, and answers its test without failing on a chat request', async () => {
    for (const [type, models, testMessage] of CASES) {
      const created = await root.post('/api/channel/', {
        name: `task-${type}`,
        type,
        key: 'mj-secret',
        base_url: 'https://proxy.example/',
        models,
        group: 'default',
      });
      expect(created.body, String(type)).toMatchObject({ success: true });
      const id = created.body.data.id;
      const row = await server.ctx.db
        .selectFrom('channels')
        .select(['type', 'base_url', 'models'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ type, base_url: 'https://proxy.example', models });
      const abilities = await server.ctx.db
        .selectFrom('abilities')
        .select('model')
        .where('channel_id', '=', id)
        .execute();
      expect(abilities.map((a) => a.model).sort()).toEqual(models.split(',').sort());

      const test = await root.get(`/api/channel/test/${id}`);
      expect(test.body).toEqual({ success: false, message: testMessage, time: 0 });

      // editable like any other channel, and copied
      expect((await root.put('/api/channel/', { id, name: `task-${type}-renamed` })).body.success).toBe(true);
      expect((await root.post(`/api/channel/copy/${id}`, {})).body.success).toBe(true);
    }
  });

  it('refuses one without a base URL (it has no default), naming the field', async () => {
    for (const [type] of CASES) {
      const res = await root.post('/api/channel/', { name: `nb-${type}`, type, key: 'k', models: 'mj_imagine' });
      expect(res.body, String(type)).toEqual({ success: false, message: '该渠道类型必须填写代理地址（Base URL）' });
      const check = await root.post('/api/channel/check', { type, key: 'k' });
      expect(check.body).toEqual({
        success: false,
        message: '该渠道类型必须填写代理地址（Base URL）',
        data: { field: 'base_url' },
      });
    }
    expect(await server.ctx.db.selectFrom('channels').select('id').where('name', 'like', 'nb-%').execute()).toEqual([]);
  });

  it("offers them in the form's type list", async () => {
    const types = (await root.get('/api/channel/types')).body.data as Array<{ value: number; relayable: boolean }>;
    for (const [type] of CASES) expect(types.find((e) => e.value === type)?.relayable).toBe(true);
  });
});
