// Multi-key channels in the console API (issue 44): new-api's add modes (single, batch, multi_to_single; Vertex AI's
// JSON array), key_mode append / replace, POST /api/channel/multi_key/manage with its seven actions, answers and
// messages, one key's test (/api/channel/test/:id?key_index=), keys never answered whole, and channel_info rows in
// new-api's shape read and written on every database.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { KeyedUpstream } from '../helpers/mock-keyed-upstream.js';
import { makeServiceAccount } from '../helpers/mock-vertex.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import type { TestServer } from '../helpers/server.js';
import { startConsole } from './fixture.js';
import { setOptions } from '../relay/fixtures.js';

const MODEL = 'mk-console-model';
const KEYS = Array.from({ length: 5 }, (_, i) => `sk-console-key-${i}-${'x'.repeat(30)}${i}`);

/** The column as stored: text, or what the driver parsed (PostgreSQL, MySQL json). */
function rawInfo(v: unknown): Record<string, unknown> {
  return (typeof v === 'string' ? JSON.parse(v) : v) as Record<string, unknown>;
}

await describeEachDb('multi-key channels in the console', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let up: KeyedUpstream;
  /** every answer of this suite, to check that no key ever comes back whole */
  const answers: unknown[] = [];

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    up = await KeyedUpstream.start(KEYS);
    await setOptions(server, { ModelRatio: { [MODEL]: 1 } });
  });
  afterAll(async () => {
    for (const key of KEYS) expect(JSON.stringify(answers)).not.toContain(key);
    await server?.close();
    await up?.close();
  });

  const call = async (method: 'get' | 'post' | 'put', path: string, body?: unknown) => {
    const r = method === 'get' ? await root.get(path) : await root[method](path, body);
    answers.push(r.body);
    return r.body;
  };
  const manage = (body: Record<string, unknown>) => call('post', '/api/channel/multi_key/manage', body);
  const channel = (extra: Record<string, unknown> = {}) => ({
    name: 'mk',
    type: 1,
    key: KEYS.join('\n'),
    base_url: up.url,
    models: MODEL,
    group: 'default',
    ...extra,
  });
  const row = (id: number) =>
    server.ctx.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const count = async () =>
    Number(
      (
        await server.ctx.db
          .selectFrom('channels')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('adds by mode: single keeps the key whole, batch makes one channel per line, multi_to_single one channel', async () => {
    const single = await call('post', '/api/channel/', { mode: 'single', channel: channel({ key: 'sk-single-one' }) });
    expect(single.success).toBe(true);
    expect((await row(single.data.id)).key).toBe('sk-single-one');
    expect(rawInfo((await row(single.data.id)).channel_info)).toEqual({
      is_multi_key: false,
      multi_key_size: 0,
      multi_key_status_list: null,
      multi_key_polling_index: 0,
      multi_key_mode: '',
    });

    const batch = await call('post', '/api/channel/', {
      mode: 'batch',
      batch_add_set_key_prefix_2_name: true,
      channel: channel({ key: 'sk-batch-aaaa\n\nsk-batch-bbbb\n' }),
    });
    expect(batch.data.ids).toHaveLength(2);
    expect((await row(batch.data.ids[1])).name).toBe('mk sk-batch');

    const multi = await call('post', '/api/channel/', {
      mode: 'multi_to_single',
      multi_key_mode: 'polling',
      channel: channel({ key: `${KEYS.join('\n')}\n` }),
    });
    expect(multi.data.ids).toHaveLength(1);
    const r = await row(multi.data.id);
    expect(r.key).toBe(KEYS.join('\n'));
    expect(rawInfo(r.channel_info)).toEqual({
      is_multi_key: true,
      multi_key_size: 5,
      multi_key_status_list: {},
      multi_key_polling_index: 0,
      multi_key_mode: 'polling',
    });
    // the console's reads show the state, never the keys
    const got = await call('get', `/api/channel/${multi.data.id}`);
    expect(got.data.channel_info).toMatchObject({ is_multi_key: true, multi_key_size: 5 });
    expect(got.data.key).toBeUndefined();
    await call('get', '/api/channel/?p=0&page_size=50');
  });

  it('refuses an unknown add mode or multi-key mode and adds nothing', async () => {
    const before = await count();
    expect(await call('post', '/api/channel/', { mode: 'many', channel: channel() })).toEqual({
      success: false,
      message: '不支持的添加模式',
    });
    expect(
      await call('post', '/api/channel/', { mode: 'multi_to_single', multi_key_mode: 'round', channel: channel() }),
    ).toEqual({ success: false, message: '多密钥模式只能是 random 或 polling' });
    expect(await count()).toBe(before);
  });

  it('takes Vertex AI keys as a JSON array, stored one compact document per line', async () => {
    const sa = [makeServiceAccount(up.url, { name: 'a' }), makeServiceAccount(up.url, { name: 'b' })].map((k) =>
      JSON.parse(k),
    );
    const vertex = { type: 41, key: JSON.stringify(sa, null, 2), other: '{"default":"us-central1"}', base_url: '' };
    // the drawer's check takes the add mode: a list of documents for batch and multi_to_single, one otherwise
    expect((await call('post', '/api/channel/check', { ...vertex, mode: 'multi_to_single' })).success).toBe(true);
    expect((await call('post', '/api/channel/check', vertex)).success).toBe(false);
    const multi = await call('post', '/api/channel/', { mode: 'multi_to_single', channel: channel(vertex) });
    expect(multi.success, JSON.stringify(multi)).toBe(true);
    const r = await row(multi.data.id);
    expect(r.key.split('\n').map((l) => JSON.parse(l))).toEqual(sa);
    expect(rawInfo(r.channel_info)).toMatchObject({ is_multi_key: true, multi_key_size: 2, multi_key_mode: 'random' });
    const batch = await call('post', '/api/channel/', { mode: 'batch', channel: channel(vertex) });
    expect(batch.data.ids).toHaveLength(2);
    const bad = await call('post', '/api/channel/', {
      mode: 'batch',
      channel: channel({ ...vertex, key: '[{"type":' }),
    });
    expect(bad.success).toBe(false);
  });

  it('edits keys: append adds the new ones and keeps statuses, replace starts over', async () => {
    const { data } = await call('post', '/api/channel/', {
      mode: 'multi_to_single',
      channel: channel({ key: KEYS.slice(0, 2).join('\n') }),
    });
    const id = data.id as number;
    expect((await manage({ channel_id: id, action: 'disable_key', key_index: 1 })).success).toBe(true);
    const appended = await call('put', '/api/channel/', {
      id,
      key: `${KEYS[1]}\n${KEYS[2]}`,
      key_mode: 'append',
      multi_key_mode: 'polling',
    });
    expect(appended.success, JSON.stringify(appended)).toBe(true);
    expect(appended.data.channel_info).toMatchObject({
      multi_key_size: 3,
      multi_key_status_list: { '1': 2 },
      multi_key_mode: 'polling',
    });
    expect((await row(id)).key).toBe(KEYS.slice(0, 3).join('\n'));

    const refused = await call('put', '/api/channel/', { id, key: KEYS[4], key_mode: 'merge' });
    expect(refused).toEqual({ success: false, message: '密钥更新模式只能是 append 或 replace' });
    expect((await row(id)).key).toBe(KEYS.slice(0, 3).join('\n'));

    const replaced = await call('put', '/api/channel/', { id, key: `${KEYS[3]}\n${KEYS[4]}`, key_mode: 'replace' });
    expect(replaced.data.channel_info).toMatchObject({
      multi_key_size: 2,
      multi_key_status_list: {},
      multi_key_mode: 'polling',
    });
    expect((await row(id)).key).toBe(`${KEYS[3]}\n${KEYS[4]}`);
  });

  it('manages keys with new-api’s actions and answers', async () => {
    const { data } = await call('post', '/api/channel/', { mode: 'multi_to_single', channel: channel() });
    const id = data.id as number;
    // an automatic disable as the relay records it
    await server.ctx.db
      .updateTable('channels')
      .set({
        channel_info: JSON.stringify({
          is_multi_key: true,
          multi_key_size: 5,
          multi_key_status_list: { '3': 3, '4': 3 },
          multi_key_disabled_reason: { '3': 'quota gone', '4': 'revoked' },
          multi_key_disabled_time: { '3': 1700000003, '4': 1700000004 },
          multi_key_polling_index: 0,
          multi_key_mode: 'random',
        }),
      })
      .where('id', '=', id)
      .execute();
    expect(await manage({ channel_id: id, action: 'disable_key', key_index: 0 })).toEqual({
      success: true,
      message: '密钥已禁用',
    });
    const page = await manage({ channel_id: id, action: 'get_key_status', page: 2, page_size: 2 });
    expect(page.data).toMatchObject({
      total: 5,
      page: 2,
      page_size: 2,
      total_pages: 3,
      enabled_count: 2,
      manual_disabled_count: 1,
      auto_disabled_count: 2,
    });
    expect(page.data.keys).toEqual([
      { index: 2, status: 1, key_preview: `${KEYS[2].slice(0, 6)}…${KEYS[2].slice(-4)}` },
      { index: 3, status: 3, disabled_time: 1700000003, reason: 'quota gone', key_preview: expect.any(String) },
    ]);
    const auto = await manage({ channel_id: id, action: 'get_key_status', status: 3 });
    expect(auto.data.keys.map((k: { index: number }) => k.index)).toEqual([3, 4]);

    expect(await manage({ channel_id: id, action: 'delete_disabled_keys' })).toEqual({
      success: true,
      message: '已删除 2 个自动禁用的密钥',
      data: 2,
    });
    expect((await row(id)).key).toBe(KEYS.slice(0, 3).join('\n'));
    expect(await manage({ channel_id: id, action: 'delete_key', key_index: 1 })).toEqual({
      success: true,
      message: '密钥已删除',
    });
    // key 0 (disabled by hand) kept its status; key 2 moved to index 1
    expect((await row(id)).key).toBe(`${KEYS[0]}\n${KEYS[2]}`);
    expect(rawInfo((await row(id)).channel_info)).toMatchObject({
      multi_key_size: 2,
      multi_key_status_list: { '0': 2 },
    });
    expect(await manage({ channel_id: id, action: 'enable_key', key_index: 0 })).toEqual({
      success: true,
      message: '密钥已启用',
    });
    expect(await manage({ channel_id: id, action: 'disable_all_keys' })).toEqual({
      success: true,
      message: '已禁用 2 个密钥',
    });
    expect(await manage({ channel_id: id, action: 'disable_all_keys' })).toEqual({
      success: false,
      message: '没有可禁用的密钥',
    });
    expect(await manage({ channel_id: id, action: 'enable_all_keys' })).toEqual({
      success: true,
      message: '已启用 2 个密钥',
    });
    expect(await manage({ channel_id: id, action: 'delete_key', key_index: 1 })).toMatchObject({ success: true });
    expect(await manage({ channel_id: id, action: 'delete_key', key_index: 0 })).toEqual({
      success: false,
      message: '不能删除最后一个密钥',
    });
  });

  it('refuses bad manage requests and changes nothing', async () => {
    const { data } = await call('post', '/api/channel/', { mode: 'multi_to_single', channel: channel() });
    const id = data.id as number;
    const single = await call('post', '/api/channel/', { mode: 'single', channel: channel({ key: 'sk-only-one' }) });
    const before = await row(id);
    const cases: [Record<string, unknown>, string][] = [
      [{ channel_id: id, action: 'disable_key' }, '未指定要禁用的密钥索引'],
      [{ channel_id: id, action: 'enable_key' }, '未指定要启用的密钥索引'],
      [{ channel_id: id, action: 'delete_key' }, '未指定要删除的密钥索引'],
      [{ channel_id: id, action: 'disable_key', key_index: 5 }, '密钥索引超出范围'],
      [{ channel_id: id, action: 'delete_key', key_index: -1 }, '密钥索引超出范围'],
      [{ channel_id: id, action: 'delete_key', key_index: 'x' }, '密钥索引超出范围'],
      [{ channel_id: id, action: 'delete_disabled_keys' }, '没有需要删除的自动禁用密钥'],
      [{ channel_id: id, action: 'explode' }, '不支持的操作'],
      [{ channel_id: id, action: 'toString' }, '不支持的操作'],
      [{ channel_id: single.data.id, action: 'get_key_status' }, '该渠道不是多密钥模式'],
      [{ channel_id: 999999, action: 'get_key_status' }, '渠道不存在'],
      [{ action: 'get_key_status' }, '渠道不存在'],
    ];
    for (const [body, message] of cases)
      expect(await manage(body), JSON.stringify(body)).toEqual({ success: false, message });
    expect(await row(id)).toEqual(before);
  });

  it('tests one key of a channel by its index', async () => {
    const { data } = await call('post', '/api/channel/', { mode: 'multi_to_single', channel: channel() });
    const id = data.id as number;
    up.reset();
    const r = await call('get', `/api/channel/test/${id}?key_index=3`);
    expect(r.success, JSON.stringify(r)).toBe(true);
    expect(up.used).toEqual([KEYS[3]]);
    up.revoked.add(KEYS[2]);
    const failed = await call('get', `/api/channel/test/${id}?key_index=2`);
    expect(failed.success).toBe(false);
    // the test reports; it disables nothing
    expect(rawInfo((await row(id)).channel_info).multi_key_status_list).toEqual({});
    up.revoked.delete(KEYS[2]);
    expect(await call('get', `/api/channel/test/${id}?key_index=9`)).toEqual({
      success: false,
      message: '密钥索引超出范围',
    });
  });

  it('reads a channel new-api wrote, and writes channel_info new-api reads', async () => {
    // as new-api's gorm stores it (Go maps with int keys are JSON objects with string keys)
    const info = {
      is_multi_key: true,
      multi_key_size: 3,
      multi_key_status_list: { '1': 3 },
      multi_key_disabled_reason: { '1': 'status code 401' },
      multi_key_disabled_time: { '1': 1750000000 },
      multi_key_polling_index: 2,
      multi_key_mode: 'polling',
    };
    await server.ctx.db
      .insertInto('channels')
      .values({
        type: 1,
        key: KEYS.slice(0, 3).join('\n'),
        name: 'written-by-new-api',
        base_url: up.url,
        models: MODEL,
        group: 'default',
        created_time: 1750000000,
        channel_info: JSON.stringify(info),
      })
      .execute();
    const { id } = await server.ctx.db
      .selectFrom('channels')
      .select('id')
      .where('name', '=', 'written-by-new-api')
      .executeTakeFirstOrThrow();
    const status = await manage({ channel_id: id, action: 'get_key_status' });
    expect(status.data.keys[1]).toMatchObject({
      index: 1,
      status: 3,
      reason: 'status code 401',
      disabled_time: 1750000000,
    });
    expect(await manage({ channel_id: id, action: 'disable_key', key_index: 0 })).toMatchObject({ success: true });
    const stored = rawInfo((await row(id)).channel_info);
    expect(Object.keys(stored)).toEqual(
      [
        'is_multi_key',
        'multi_key_size',
        'multi_key_status_list',
        'multi_key_disabled_reason',
        'multi_key_disabled_time',
        'multi_key_polling_index',
        'multi_key_mode',
      ].filter((k) => k in stored),
    );
    expect(stored).toMatchObject({
      is_multi_key: true,
      multi_key_size: 3,
      multi_key_status_list: { '0': 2, '1': 3 },
      multi_key_disabled_reason: { '1': 'status code 401' },
      multi_key_polling_index: 2,
      multi_key_mode: 'polling',
    });
  });
});
