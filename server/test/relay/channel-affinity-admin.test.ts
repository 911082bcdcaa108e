// Channel affinity's option and admin routes (issue 44): new-api's statistics and clear routes (root only, its shapes
// and messages), the console's checks of channel_affinity_setting (bad JSON or regexes refused, nothing saved), rows
// written by new-api read as they are, and two gateways sharing Redis sharing their sticky choices.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createTestDatabase, redisAvailable, REDIS_URL, uniqueName, type TestDatabase } from '../helpers/databases.js';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../helpers/mock-anthropic.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { setupAndLoginRoot, userWithRole } from '../console/fixtures.js';
import { addChannel, addToken, addUser, channelsChanged, setOptions } from './fixtures.js';
import { relayServices } from '../../src/relay/services.js';
import { DEFAULT_RULES, RULES_KEY } from '../../src/services/channel-affinity/setting.js';

const SONNET = 'claude-sonnet-4-6';
const CACHE = '/api/option/channel_affinity_cache';

interface Gateway {
  s: TestServer;
  mocks: MockAnthropic[];
  ids: number[];
  key: string;
}

async function seed(s: TestServer, mocks: MockAnthropic[]): Promise<Omit<Gateway, 's' | 'mocks'>> {
  await setOptions(s, { ModelRatio: { [SONNET]: 1 } });
  const ids: number[] = [];
  for (const m of mocks)
    ids.push(await addChannel(s, { type: 14, baseUrl: m.url, key: ANTHROPIC_MOCK_KEY, models: [SONNET] }));
  await channelsChanged(s);
  const user = await addUser(s, { quota: 1_000_000_000 });
  return { ids, key: (await addToken(s, user.id)).key };
}

const ask = (s: TestServer, key: string, userId: string, headers: Record<string, string> = {}) =>
  new Anthropic({ apiKey: `sk-${key}`, baseURL: s.url, maxRetries: 0, defaultHeaders: headers }).messages.create({
    model: SONNET,
    max_tokens: 32,
    messages: [{ role: 'user', content: 'hello' }],
    metadata: { user_id: userId },
  });

/** the indexes of the mocks each request went to, in order */
async function route(mocks: MockAnthropic[], calls: Array<() => Promise<unknown>>): Promise<number[]> {
  const out: number[] = [];
  for (const call of calls) {
    const before = mocks.map((m) => m.requests.length);
    await call();
    out.push(mocks.findIndex((m, i) => m.requests.length > before[i]));
  }
  return out;
}

describe('channel affinity: admin routes and the option', () => {
  let g: Gateway;
  let root: ConsoleClient;

  beforeAll(async () => {
    const s = await startTestServer();
    const mocks = [await MockAnthropic.start(), await MockAnthropic.start()];
    g = { s, mocks, ...(await seed(s, mocks)) };
    root = await setupAndLoginRoot(s);
  });
  afterAll(async () => {
    await g?.s.close();
    await Promise.all(g?.mocks.map((m) => m.close()) ?? []);
  });

  it('statistics count entries per rule; clearing takes one rule, or all, with new-api shapes and messages', async () => {
    for (const u of ['u1', 'u2', 'u3']) await ask(g.s, g.key, u);
    expect((await root.get(CACHE)).body).toEqual({
      success: true,
      message: '',
      data: {
        enabled: true,
        total: 3,
        unknown: 0,
        by_rule_name: { 'codex cli trace': 0, 'claude cli trace': 3 },
        cache_capacity: 100000,
        cache_algo: 'lru',
      },
    });
    const missing = await root.delete(CACHE);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ success: false, message: '缺少参数：rule_name，或使用 all=true 清空全部' });
    const unknown = await root.delete(`${CACHE}?rule_name=nope`);
    expect([unknown.status, unknown.body]).toEqual([400, { success: false, message: '未知规则名称' }]);
    const one = await root.delete(`${CACHE}?rule_name=${encodeURIComponent('claude cli trace')}`);
    expect(one.body).toEqual({ success: true, message: '', data: { deleted: 3 } });
    expect((await root.get(CACHE)).body.data.total).toBe(0);
    await ask(g.s, g.key, 'u4');
    expect((await root.delete(`${CACHE}?all=true`)).body).toEqual({ success: true, message: '', data: { deleted: 1 } });
    // a rule that keeps its name out of its keys cannot be cleared by name
    await setOptions(g.s, { [RULES_KEY]: [{ ...DEFAULT_RULES[1], include_rule_name: false }] });
    const unnamed = await root.delete(`${CACHE}?rule_name=${encodeURIComponent('claude cli trace')}`);
    expect(unnamed.body).toEqual({
      success: false,
      message: '该规则未启用 include_rule_name，无法按规则清空缓存',
    });
    await setOptions(g.s, { [RULES_KEY]: DEFAULT_RULES });
  });

  it('only root reads or clears the cache: an admin and a user are refused', async () => {
    await ask(g.s, g.key, 'kept');
    for (const role of [1, 10] as const) {
      const u = await userWithRole(g.s, root, role);
      const read = await u.client.get(CACHE);
      expect(read.body.success, JSON.stringify(read.body)).toBe(false);
      expect(read.body.data).toBeUndefined();
      const clear = await u.client.delete(`${CACHE}?all=true`);
      expect(clear.body.success).toBe(false);
    }
    expect((await root.get(CACHE)).body.data.total).toBe(1);
    await root.delete(`${CACHE}?all=true`);
  });

  it('the console refuses rules that are not JSON, not rules, or bad regexes, and saves nothing', async () => {
    const stored = async () =>
      (await g.s.ctx.db.selectFrom('options').select('value').where('key', '=', RULES_KEY).executeTakeFirst())?.value;
    const before = await stored();
    const refused: Array<[unknown, string]> = [
      ['[{"name": "x",', `${RULES_KEY} 不是合法的 JSON 字符串`],
      ['{"name": "x"}', `${RULES_KEY} 必须是规则数组`],
      [
        JSON.stringify([{ ...DEFAULT_RULES[1], model_regex: ['^claude-(.*$'] }]),
        '规则 claude cli trace 的 model_regex 含有无效的正则表达式：^claude-(.*$',
      ],
      [
        JSON.stringify([{ ...DEFAULT_RULES[1], key_sources: [{ type: 'cookie', key: 'sid' }] }]),
        '规则 claude cli trace 的 key_sources 类型无效：cookie（可选 context_int、context_string、request_header、gjson）',
      ],
    ];
    for (const [value, message] of refused) {
      const r = await root.put('/api/option/', { key: RULES_KEY, value });
      expect(r.body).toEqual({ success: false, message });
      expect(await stored()).toBe(before);
    }
    const ttl = await root.put('/api/option/', { key: 'channel_affinity_setting.default_ttl_seconds', value: '-5' });
    expect(ttl.body.success).toBe(false);
    // the statistics still read the rules in force
    expect(Object.keys((await root.get(CACHE)).body.data.by_rule_name)).toEqual([
      'codex cli trace',
      'claude cli trace',
    ]);
  });

  it('rules saved from the console take effect at once: a header key, and enabled=false', async () => {
    const rules = [
      {
        name: 'by header',
        model_regex: ['(?i)^CLAUDE-'],
        path_regex: ['^/v1/messages$'],
        key_sources: [{ type: 'request_header', key: 'X-Conversation' }],
        value_regex: '^conv-',
        ttl_seconds: 60,
        skip_retry_on_failure: false,
        include_using_group: false,
        include_model_name: true,
        include_rule_name: true,
      },
    ];
    expect((await root.put('/api/option/', { key: RULES_KEY, value: JSON.stringify(rules) })).body.success).toBe(true);
    const store = relayServices(g.s.ctx).affinity.store;
    const served = await route(
      g.mocks,
      Array.from({ length: 5 }, () => () => ask(g.s, g.key, 'ignored', { 'X-Conversation': 'conv-7' })),
    );
    expect(new Set(served).size).toBe(1);
    expect(store.get(`by header:${SONNET}:conv-7`)).toBe(g.ids[served[0]]);
    // a value the value_regex refuses is no key
    await ask(g.s, g.key, 'ignored', { 'X-Conversation': 'other' });
    expect(await store.suffixes()).toEqual([`by header:${SONNET}:conv-7`]);
    expect(
      (await root.put('/api/option/', { key: 'channel_affinity_setting.enabled', value: false })).body.success,
    ).toBe(true);
    await root.delete(`${CACHE}?all=true`);
    await ask(g.s, g.key, 'ignored', { 'X-Conversation': 'conv-8' });
    expect(await store.suffixes()).toEqual([]);
    expect((await root.get(CACHE)).body.data.enabled).toBe(false);
    await setOptions(g.s, { 'channel_affinity_setting.enabled': 'true', [RULES_KEY]: DEFAULT_RULES });
  });

  it("reads the rows new-api writes: Claude Code's JSON user_id through nested_path", async () => {
    // new-api's newer default: metadata.user_id is JSON text and the session is its session_id
    const rules = [
      { ...DEFAULT_RULES[1], key_sources: [{ type: 'gjson', path: 'metadata.user_id', nested_path: 'session_id' }] },
    ];
    await g.s.ctx.db
      .updateTable('options')
      .set({ value: JSON.stringify(rules) })
      .where('key', '=', RULES_KEY)
      .execute();
    await g.s.ctx.options.load();
    const userId = (session: string) => JSON.stringify({ device_id: 'd1', account_uuid: '', session_id: session });
    const served = await route(g.mocks, [
      () => ask(g.s, g.key, userId('sess-a')),
      () => ask(g.s, g.key, userId('sess-a')),
      () => ask(g.s, g.key, userId('sess-a')),
    ]);
    expect(new Set(served).size).toBe(1);
    expect(await relayServices(g.s.ctx).affinity.store.suffixes()).toEqual(['claude cli trace:default:sess-a']);
    await setOptions(g.s, { [RULES_KEY]: DEFAULT_RULES });
  });
});

// a Redis on 127.0.0.1:6379 is needed to share entries between two gateways; without one there is nothing to share
describe.skipIf(!(await redisAvailable()))('channel affinity across two gateways sharing Redis', () => {
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  let mocks: MockAnthropic[];
  let key: string;
  let ids: number[];
  const prefix = uniqueName('gwt-aff') + ':';

  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
    mocks = [await MockAnthropic.start(), await MockAnthropic.start(), await MockAnthropic.start()];
    const env = { REDIS_CONN_STRING: REDIS_URL };
    a = await startTestServer({ database: db, env, redisPrefix: prefix });
    b = await startTestServer({ database: db, env: { ...env, NODE_TYPE: 'slave' }, redisPrefix: prefix });
    ({ ids, key } = await seed(a, mocks));
    await setOptions(b, { ModelRatio: { [SONNET]: 1 } });
    await channelsChanged(b);
  });
  afterAll(async () => {
    await relayServices(a.ctx)?.affinity.clear(null);
    await b?.close();
    await a?.close();
    await db?.drop();
    await Promise.all(mocks.map((m) => m.close()));
  });

  it('a session routed by one gateway stays on its channel through the other; stats and clear see one cache', async () => {
    const sessions = ['r-1', 'r-2', 'r-3', 'r-4', 'r-5', 'r-6'];
    for (const session of sessions) {
      const served = await route(
        mocks,
        Array.from({ length: 6 }, (_, i) => () => ask(i % 2 ? b : a, key, session)),
      );
      expect(new Set(served).size, `${session}: ${served.join(',')}`).toBe(1);
      const redisKey = `${prefix}new-api:channel_affinity:v1:claude cli trace:default:${session}`;
      expect(await a.ctx.redis!.get(redisKey)).toBe(String(ids[served[0]]));
      const ttl = await a.ctx.redis!.ttl(redisKey);
      expect(ttl).toBeGreaterThan(3500);
      expect(ttl).toBeLessThanOrEqual(3600);
    }
    const root = await setupAndLoginRoot(b);
    const stats = (await root.get(CACHE)).body.data;
    expect(stats).toMatchObject({ total: sessions.length, cache_algo: 'redis' });
    expect(stats.by_rule_name['claude cli trace']).toBe(sessions.length);
    const rootA = await setupAndLoginRoot(a);
    expect((await rootA.delete(`${CACHE}?all=true`)).body.data).toEqual({ deleted: sessions.length });
    expect((await root.get(CACHE)).body.data.total).toBe(0);
  });
});
