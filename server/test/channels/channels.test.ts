import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, recordChanges, startConsole } from './fixture.js';

await describeEachDb('channel console API', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let changes: ReturnType<typeof recordChanges>;

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    changes = recordChanges(server);
  });
  afterAll(async () => {
    changes?.stop();
    await server?.close();
  });

  const db = () => server.ctx.db;
  const channelCount = async () =>
    Number(
      (
        await db()
          .selectFrom('channels')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  /** Ability rows as comparable tuples: group|model|channel|enabled|priority|weight|tag. */
  async function abilities(channelIds?: number[]): Promise<string[]> {
    let q = db().selectFrom('abilities').selectAll();
    if (channelIds) q = q.where('channel_id', 'in', channelIds);
    const rows = await q.execute();
    return rows
      .map(
        (r) =>
          `${r.group}|${r.model}|${Number(r.channel_id)}|${r.enabled ? 1 : 0}|${r.priority ?? 0}|${r.weight}|${r.tag ?? ''}`,
      )
      .sort();
  }

  async function create(body: Record<string, unknown>): Promise<number[]> {
    const res = await root.post('/api/channel/', body);
    expect(res.body.success, JSON.stringify(res.body)).toBe(true);
    return res.body.data.ids;
  }

  beforeEach(async () => {
    await db().deleteFrom('abilities').execute();
    await db().deleteFrom('channels').execute();
    changes.take();
  });

  it('refuses invalid channels without writing anything', async () => {
    const base = { name: 'c', type: 1, key: 'sk-1', models: 'gpt-4o', group: 'default' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, name: '' }, '请填写渠道名称和渠道密钥！'],
      [{ ...base, key: '  ' }, '请填写渠道名称和渠道密钥！'],
      [{ ...base, models: '' }, '请至少选择一个模型！'],
      [{ ...base, models: ' , ' }, '请至少选择一个模型！'],
      [{ ...base, model_mapping: '{not json' }, '模型映射必须是合法的 JSON 格式！'],
      [{ ...base, model_mapping: '[1]' }, '模型映射必须是合法的 JSON 格式！'],
      [{ ...base, models: `gpt-4o,${'m'.repeat(256)}` }, `模型名称过长: ${'m'.repeat(256)}`],
      [{ ...base, models: 'gpt-4o,GPT-4o' }, '模型名称重复（仅大小写不同）: GPT-4o'],
      [{ ...base, group: 'vip,VIP' }, '分组名称重复（仅大小写不同）: VIP'],
      [{ ...base, group: 'g'.repeat(65) }, `分组名称过长: ${'g'.repeat(65)}`],
      [{ ...base, priority: 1.5 }, '优先级必须是整数！'],
      [{ ...base, weight: -1 }, '权重必须是非负整数！'],
      [
        { ...base, type: 21, key: 'sk-1' },
        '渠道类型 知识库：AI Proxy（21）暂不支持：本网关还没有该类型的适配器，不会向它转发请求',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await root.post('/api/channel/', body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: false, message });
    }
    expect(await channelCount()).toBe(0);
    expect(await abilities()).toEqual([]);
    expect(changes.take()).toEqual([]);
  });

  it('creates one channel per key line with abilities for models × groups, and publishes a channels change', async () => {
    const ids = await create({
      name: 'multi',
      type: 1,
      key: 'sk-a\nsk-b\r\n\n  sk-c  ',
      models: 'gpt-4o, gpt-4o-mini,gpt-4o',
      group: 'default,vip',
      base_url: 'https://up.example.com/',
      priority: 3,
      weight: 7,
      model_mapping: '{"gpt-4o":"gpt-4o-2024-11-20"}',
    });
    expect(ids).toHaveLength(3);
    expect(changes.take()).toEqual([{ kind: 'channels' }]);
    const rows = await db().selectFrom('channels').selectAll().orderBy('id').execute();
    expect(rows.map((r) => r.key)).toEqual(['sk-a', 'sk-b', 'sk-c']);
    for (const r of rows) {
      expect(r).toMatchObject({
        name: 'multi',
        type: 1,
        models: 'gpt-4o,gpt-4o-mini',
        group: 'default,vip',
        base_url: 'https://up.example.com',
        status: 1,
        priority: 3,
        weight: 7,
        auto_ban: 1,
      });
      expect(Math.abs(r.created_time - Date.now() / 1000)).toBeLessThan(60);
    }
    const expected = ids
      .flatMap((id) =>
        ['default', 'vip'].flatMap((g) => ['gpt-4o', 'gpt-4o-mini'].map((m) => `${g}|${m}|${id}|1|3|7|`)),
      )
      .sort();
    expect(await abilities()).toEqual(expected);

    // The later frontend's {mode:'single', channel} wrapper keeps the key whole.
    const single = await create({
      mode: 'single',
      channel: { name: 's', type: 1, key: 'k1\nk2', models: ['a', 'b'], groups: ['default'] },
    });
    expect(single).toHaveLength(1);
    const s = await db()
      .selectFrom('channels')
      .select(['key', 'models'])
      .where('id', '=', single[0])
      .executeTakeFirstOrThrow();
    expect(s).toEqual({ key: 'k1\nk2', models: 'a,b' });
  });

  it('lists 0-based pages as plain arrays without keys, and reads one channel without its key', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(...(await create({ name: `ch${i}`, key: `sk-${i}`, models: 'm1', priority: i % 2 })));
    const p0 = await root.get('/api/channel/?p=0&page_size=2&id_sort=true');
    expect(p0.body.success).toBe(true);
    expect(Array.isArray(p0.body.data)).toBe(true);
    expect(p0.body.total).toBe(5);
    expect(p0.body.data.map((c: any) => c.id)).toEqual([ids[4], ids[3]]);
    for (const c of p0.body.data) expect(c).not.toHaveProperty('key');
    const p2 = await root.get('/api/channel/?p=2&page_size=2&id_sort=true');
    expect(p2.body.data.map((c: any) => c.id)).toEqual([ids[0]]);
    // Default order: priority first.
    const byPriority = await root.get('/api/channel/?p=0&page_size=10');
    expect(byPriority.body.data.map((c: any) => c.priority)).toEqual([1, 1, 0, 0, 0]);
    // Without the trailing slash too.
    expect((await root.get('/api/channel?p=0&page_size=1')).body.data).toHaveLength(1);

    const one = await root.get(`/api/channel/${ids[2]}`);
    expect(one.body.success).toBe(true);
    expect(one.body.data).toMatchObject({ id: ids[2], name: 'ch2', models: 'm1' });
    expect(one.body.data).not.toHaveProperty('key');
    expect((await root.get('/api/channel/999999')).body.success).toBe(false);
  });

  it('updates partially (status, priority, weight) and fully, keeping abilities in step', async () => {
    const [id] = await create({ name: 'u', key: 'sk-keep', models: 'a,b', group: 'default' });
    changes.take();

    expect((await root.put('/api/channel/', { id, status: 2 })).body.success).toBe(true);
    expect(changes.take()).toEqual([{ kind: 'channels' }]);
    expect(await abilities([id])).toEqual([`default|a|${id}|0|0|0|`, `default|b|${id}|0|0|0|`]);

    for (const [body, message] of [
      [{ id, priority: 'x' }, '优先级必须是整数！'],
      [{ id, priority: -1000 }, '优先级必须是整数！'],
      [{ id, weight: -3 }, '权重必须是非负整数！'],
      [{ id, weight: 2.5 }, '权重必须是非负整数！'],
      [{ id, models: '' }, '请至少选择一个模型！'],
      [{ id, model_mapping: 'nope' }, '模型映射必须是合法的 JSON 格式！'],
    ] as Array<[Record<string, unknown>, string]>) {
      expect((await root.put('/api/channel/', body)).body).toEqual({ success: false, message });
    }
    expect(changes.take()).toEqual([]);
    expect(
      await db()
        .selectFrom('channels')
        .select(['priority', 'weight', 'status'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ priority: 0, weight: 0, status: 2 });

    expect((await root.put('/api/channel/', { id, priority: -999 })).body.success).toBe(true);
    expect((await root.put('/api/channel/', { id, weight: 9, status: 1 })).body.success).toBe(true);
    expect(await abilities([id])).toEqual([`default|a|${id}|1|-999|9|`, `default|b|${id}|1|-999|9|`]);

    const full = await root.put('/api/channel/', {
      id,
      name: 'renamed',
      key: '',
      models: 'c',
      group: 'vip,svip',
      base_url: 'http://x/',
      tag: 't1',
    });
    expect(full.body.success).toBe(true);
    expect(full.body.data).toMatchObject({
      id,
      name: 'renamed',
      models: 'c',
      group: 'vip,svip',
      base_url: 'http://x',
      tag: 't1',
    });
    expect(full.body.data).not.toHaveProperty('key');
    const row = await db()
      .selectFrom('channels')
      .select(['key', 'name'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ key: 'sk-keep', name: 'renamed' });
    expect(await abilities([id])).toEqual([`svip|c|${id}|1|-999|9|t1`, `vip|c|${id}|1|-999|9|t1`]);
    expect((await root.put('/api/channel/', { id: 999999, status: 1 })).body).toEqual({
      success: false,
      message: '渠道不存在',
    });
  });

  it('deletes one, the disabled ones and a batch, removing their abilities', async () => {
    const ids = await create({ name: 'd', key: 'a\nb\nc\nd\ne', models: 'm' });
    changes.take();
    expect((await root.delete(`/api/channel/${ids[0]}/`)).body.success).toBe(true);
    expect(changes.take()).toEqual([{ kind: 'channels' }]);
    expect(await abilities([ids[0]])).toEqual([]);
    expect(await channelCount()).toBe(4);

    await root.put('/api/channel/', { id: ids[1], status: 2 });
    await db().updateTable('channels').set({ status: 3 }).where('id', '=', ids[2]).execute();
    changes.take();
    const disabled = await root.delete('/api/channel/disabled');
    expect(disabled.body).toEqual({ success: true, message: '', data: 2 });
    expect(changes.take()).toEqual([{ kind: 'channels' }]);
    expect(await abilities([ids[1], ids[2]])).toEqual([]);

    expect((await root.post('/api/channel/batch', { ids: [] })).body).toEqual({
      success: false,
      message: '请先选择要删除的通道！',
    });
    expect(await channelCount()).toBe(2);
    const batch = await root.post('/api/channel/batch', { ids: [ids[3], ids[4], 999999] });
    expect(batch.body).toEqual({ success: true, message: '', data: 2 });
    expect(await channelCount()).toBe(0);
    expect(await abilities()).toEqual([]);
  });

  it('copies a channel with its key and abilities, as new-api: "_复制" suffix, balance reset unless asked not to', async () => {
    const [src] = await create({
      name: 'orig',
      key: 'sk-secret',
      models: 'x,y',
      group: 'default,vip',
      priority: 3,
      weight: 7,
      model_mapping: '{"x":"x2"}',
    });
    await db()
      .updateTable('channels')
      .set({ balance: 12.5, used_quota: 900, test_time: 111, response_time: 222 })
      .where('id', '=', src)
      .execute();
    changes.take();
    const res = await root.post(`/api/channel/copy/${src}`);
    expect(res.body.success).toBe(true);
    const id = res.body.data.id as number;
    expect(id).not.toBe(src);
    expect(changes.take()).toEqual([{ kind: 'channels' }]);
    const row = await db().selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      name: 'orig_复制',
      key: 'sk-secret',
      models: 'x,y',
      group: 'default,vip',
      priority: 3,
      weight: 7,
      model_mapping: '{"x":"x2"}',
      balance: 0,
      used_quota: 0,
      test_time: 0,
      response_time: 0,
    });
    // the copy routes like the source: same abilities, its own channel id
    expect((await abilities([id])).map((a) => a.replace(`|${id}|`, '|C|'))).toEqual(
      (await abilities([src])).map((a) => a.replace(`|${src}|`, '|C|')),
    );

    const kept = await root.post(`/api/channel/copy/${src}/?suffix=-b&reset_balance=false`);
    const keptRow = await db()
      .selectFrom('channels')
      .selectAll()
      .where('id', '=', kept.body.data.id)
      .executeTakeFirstOrThrow();
    expect(keptRow).toMatchObject({ name: 'orig-b', balance: 12.5, used_quota: 900 });

    const before = await channelCount();
    expect((await root.post('/api/channel/copy/999999')).body).toEqual({ success: false, message: '渠道不存在' });
    expect(await channelCount()).toBe(before);
  });

  it('fix rebuilds missing and orphaned abilities', async () => {
    const ids = await create({ name: 'f', key: 'a\nb', models: 'x,y', group: 'default' });
    const before = await abilities();
    await db().deleteFrom('abilities').where('channel_id', '=', ids[0]).execute();
    await db()
      .insertInto('abilities')
      .values({
        group: 'default',
        model: 'ghost',
        channel_id: 424242,
        enabled: true,
        priority: 0,
        weight: 0,
        tag: null,
      })
      .execute();
    changes.take();
    const res = await root.post('/api/channel/fix');
    expect(res.body).toEqual({ success: true, message: '', data: 2 });
    expect(changes.take()).toEqual([{ kind: 'channels' }]);
    expect(await abilities()).toEqual(before);
  });

  it('tags: batch set, tag mode listing, tag edit, enable/disable, rename and dissolve', async () => {
    const [a, b] = await create({ name: 'tagged', key: 'ka\nkb', models: 'm1', priority: 1 });
    const [c] = await create({ name: 'plain', key: 'kc', models: 'm1', priority: 5 });
    changes.take();

    expect((await root.post('/api/channel/batch/tag', { ids: [], tag: 'T' })).body).toEqual({
      success: false,
      message: '请先选择要设置标签的渠道！',
    });
    expect((await root.post('/api/channel/batch/tag', { ids: [a, b], tag: '  ' })).body).toEqual({
      success: false,
      message: '标签不能为空！',
    });
    expect(changes.take()).toEqual([]);
    expect((await root.post('/api/channel/batch/tag', { ids: [a, b], tag: 'T' })).body).toEqual({
      success: true,
      message: '',
      data: 2,
    });
    expect(changes.take()).toEqual([{ kind: 'channels' }]);
    expect(await abilities([a, b])).toEqual([`default|m1|${a}|1|1|0|T`, `default|m1|${b}|1|1|0|T`]);

    // Tag mode: the tag is one row (its members together), the untagged channel another.
    const tm = await root.get('/api/channel/?p=0&page_size=1&tag_mode=true');
    expect(tm.body.total).toBe(2);
    expect(tm.body.data.map((x: any) => x.id)).toEqual([c]);
    const tm2 = await root.get('/api/channel/?p=1&page_size=1&tag_mode=true');
    expect(tm2.body.data.map((x: any) => x.id).sort()).toEqual([a, b].sort());
    expect(tm2.body.data.every((x: any) => x.tag === 'T' && !('key' in x))).toBe(true);

    expect(
      (
        await root.put('/api/channel/tag', {
          tag: 'T',
          new_tag: 'T',
          priority: 1,
          model_mapping: '',
          models: '',
          groups: [],
        })
      ).body,
    ).toEqual({
      success: false,
      message: '没有任何修改！',
    });
    expect((await root.put('/api/channel/tag', { tag: 'T', model_mapping: '{bad' })).body).toEqual({
      success: false,
      message: '模型映射必须是合法的 JSON 格式！',
    });
    expect(changes.take()).toEqual([]);
    const edit = await root.put('/api/channel/tag', {
      tag: 'T',
      new_tag: 'T',
      priority: 8,
      weight: 4,
      models: 'm1,m2',
      groups: ['default', 'vip'],
      model_mapping: '{"m2":"up"}',
    });
    expect(edit.body.success).toBe(true);
    expect(changes.take()).toEqual([{ kind: 'channels' }]);
    expect(await abilities([a])).toEqual(
      [`default|m1|${a}|1|8|4|T`, `default|m2|${a}|1|8|4|T`, `vip|m1|${a}|1|8|4|T`, `vip|m2|${a}|1|8|4|T`].sort(),
    );
    const member = await db()
      .selectFrom('channels')
      .select(['models', 'group', 'model_mapping', 'priority', 'weight'])
      .where('id', '=', b)
      .executeTakeFirstOrThrow();
    expect(member).toEqual({
      models: 'm1,m2',
      group: 'default,vip',
      model_mapping: '{"m2":"up"}',
      priority: 8,
      weight: 4,
    });
    // The untagged channel is untouched.
    expect(await abilities([c])).toEqual([`default|m1|${c}|1|5|0|`]);

    expect((await root.post('/api/channel/tag/disabled', { tag: 'T' })).body.success).toBe(true);
    expect(changes.take()).toEqual([{ kind: 'channels' }]);
    expect((await abilities([a, b])).every((r) => r.split('|')[3] === '0')).toBe(true);
    expect(
      (await db().selectFrom('channels').select('status').where('tag', '=', 'T').execute()).map((r) => r.status),
    ).toEqual([2, 2]);
    expect((await root.post('/api/channel/tag/enabled', { tag: 'T' })).body.success).toBe(true);
    expect((await abilities([a, b])).every((r) => r.split('|')[3] === '1')).toBe(true);
    expect((await root.post('/api/channel/tag/enabled', { tag: 'nope' })).body.success).toBe(false);

    expect((await root.put('/api/channel/tag', { tag: 'T', new_tag: 'U' })).body.success).toBe(true);
    expect(await abilities([b])).toContain(`default|m1|${b}|1|8|4|U`);
    expect((await root.put('/api/channel/tag', { tag: 'U', new_tag: '' })).body.success).toBe(true);
    const dissolved = await db().selectFrom('channels').select('tag').where('id', 'in', [a, b]).execute();
    expect(dissolved.map((r) => r.tag ?? '')).toEqual(['', '']);
    expect(await abilities([a])).toContain(`default|m1|${a}|1|8|4|`);
  });

  it('searches by keyword, group and model', async () => {
    const [x] = await create({ name: 'alpha-openai', key: 'sk-secret-x', models: 'gpt-4o,o1', group: 'default' });
    const [y] = await create({
      name: 'beta',
      key: 'sk-y',
      models: 'claude-3',
      group: 'svip',
      base_url: 'https://beta.example.com',
    });
    const [z] = await create({ name: 'gamma', key: 'sk-z', models: 'gpt-4o-mini', group: 'vip', tag: 'G' });
    const ids = async (qs: string) =>
      ((await root.get(`/api/channel/search?${qs}`)).body.data as any[]).map((c) => c.id).sort();
    expect(await ids('keyword=alpha')).toEqual([x]);
    expect(await ids('keyword=beta.example')).toEqual([y]);
    expect(await ids('keyword=sk-secret-x')).toEqual([x]);
    expect(await ids(`keyword=${z}`)).toEqual([z]);
    expect(await ids('group=vip')).toEqual([z]);
    expect(await ids('model=gpt-4o')).toEqual([x, z].sort());
    expect(await ids('keyword=a&model=gpt-4o&tag_mode=true')).toEqual([x, z].sort());
    const res = await root.get('/api/channel/search?keyword=');
    expect(res.body.data).toHaveLength(3);
    for (const c of res.body.data) expect(c).not.toHaveProperty('key');
  });

  it('model lists: built-in per type, all models, enabled models and the user models', async () => {
    const { client: user } = await addUser(server, { group: 'default' });
    const builtIn = await user.get('/api/models');
    expect(builtIn.body.success).toBe(true);
    expect(builtIn.body.data['1']).toEqual(
      expect.arrayContaining([
        'gpt-4o',
        'gpt-4o-mini',
        'gpt-3.5-turbo',
        'o1',
        'o3-mini',
        'text-embedding-3-small',
        'dall-e-3',
        'whisper-1',
        'tts-1',
      ]),
    );
    expect(builtIn.body.data['14']).toEqual(expect.arrayContaining(['claude-3-5-sonnet-20241022']));

    const all = await root.get('/api/channel/models');
    const gpt = all.body.data.find((m: any) => m.id === 'gpt-4o');
    // the same objects as GET /v1/models (new-api-compat.md §4.10): owned_by is the adaptor's channel name, with
    // permission
    expect(gpt).toMatchObject({
      id: 'gpt-4o',
      object: 'model',
      created: 1626777600,
      owned_by: 'openai',
      root: 'gpt-4o',
      parent: null,
    });
    expect(gpt.permission).toEqual([
      expect.objectContaining({ object: 'model_permission', allow_sampling: true, organization: '*' }),
    ]);
    const owner = (id: string) => all.body.data.find((m: any) => m.id === id)?.owned_by;
    expect([
      owner('claude-3-5-sonnet-20241022'),
      owner('gemini-2.5-flash'),
      owner('deepseek-chat'),
      owner('moonshot-v1-8k'),
    ]).toEqual(['claude', 'google gemini', 'deepseek', 'moonshot']);
    expect(new Set(all.body.data.map((m: any) => m.id)).size).toBe(all.body.data.length);

    await create({ name: 'e1', key: 'k', models: 'm-default,m-shared', group: 'default' });
    await create({ name: 'e2', key: 'k', models: 'm-vip,m-shared', group: 'vip' });
    await create({ name: 'e3', key: 'k', models: 'm-svip', group: 'svip' });
    const [off] = await create({ name: 'e4', key: 'k', models: 'm-off', group: 'default' });
    await root.put('/api/channel/', { id: off, status: 2 });
    expect((await root.get('/api/channel/models_enabled')).body.data).toEqual([
      'm-default',
      'm-shared',
      'm-svip',
      'm-vip',
    ]);
    // default user: UserUsableGroups (default, vip) plus own group.
    expect((await user.get('/api/user/models')).body.data).toEqual(['m-default', 'm-shared', 'm-vip']);
    const { client: svipUser } = await addUser(server, { group: 'svip' });
    expect((await svipUser.get('/api/user/models')).body.data).toEqual(['m-default', 'm-shared', 'm-svip', 'm-vip']);

    // Admin-only routes refuse a normal user.
    for (const path of ['/api/channel/', '/api/channel/models', '/api/channel/models_enabled', '/api/channel/search']) {
      const res = await user.get(path);
      expect(res.body.success, path).toBe(false);
    }
    expect((await user.post('/api/channel/', { name: 'x', key: 'k', models: 'm' })).body.success).toBe(false);
  });
});
