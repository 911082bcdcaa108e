// Usage limits per key, per user and per group (issue 35; services/limits/, relay/pipeline/limit.ts) on one instance:
// requests and tokens per minute, budgets per calendar period, the channels' daily caps, and the console routes that
// set them. A refused request answers new-api's 429 with Retry-After, never reaches the upstream and is never charged.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin, setOption, setupAndLoginRoot } from '../console/fixtures.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  flushLogs,
  logsOf,
  relayPost,
  setOptions,
  userRow,
} from '../relay/fixtures.js';
import { usageLimits } from '../../src/services/limits/index.js';
import { MemoryCounters } from '../../src/services/limits/counters.js';

const MODELS = ['lim-rpm', 'lim-tpm', 'lim-budget', 'lim-group', 'lim-cap', 'lim-rolling', 'lim-zone'];

await describeEachDb('usage limits', (kind) => {
  let s: TestServer;
  let up: MockUpstream;
  let capped: MockUpstream;
  let root: ConsoleClient;

  beforeAll(async () => {
    up = await MockUpstream.start();
    capped = await MockUpstream.start();
    s = await startTestServer({ kind });
    root = await setupAndLoginRoot(s);
    for (const m of MODELS.filter((m) => m !== 'lim-cap'))
      await addChannel(s, { baseUrl: up.url, models: [m], groups: ['default', 'vip'] });
    // two channels for lim-cap: the preferred one has a daily token cap
    await addChannel(s, { baseUrl: capped.url, models: ['lim-cap'], priority: 10, setting: { daily_token_cap: 10 } });
    await addChannel(s, { baseUrl: up.url, models: ['lim-cap'], priority: 0 });
    await setOptions(s, { ModelRatio: Object.fromEntries(MODELS.map((m) => [m, 1])) });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
    await capped?.close();
  });

  const chat = (key: string, model: string, extra: Record<string, unknown> = {}) =>
    relayPost(s, '/v1/chat/completions', key, { model, messages: [{ role: 'user', content: 'hi' }], ...extra });
  const sentTo = (m: MockUpstream, model: string) => m.requests.filter((r) => r.body?.model === model).length;

  /** a user registered through the console, with quota, and a token of theirs */
  async function consoleUserWithToken() {
    const u = await registerAndLogin(s);
    await s.ctx.db.updateTable('users').set({ quota: 10_000_000 }).where('id', '=', u.id).execute();
    s.ctx.changes.publish({ kind: 'user', id: u.id });
    const t = await addToken(s, u.id);
    return { ...u, token: t };
  }

  it('RPM on a key: the (n+1)th request is refused with 429 and Retry-After, never sent upstream nor charged', async () => {
    const u = await consoleUserWithToken();
    const put = await u.client.put(`/api/token/${u.token.id}/limits`, { rpm: 3 });
    expect(put.body).toMatchObject({ success: true, data: { settings: { rpm: 3 } } });

    for (let i = 0; i < 3; i++) expect((await chat(u.token.key, 'lim-rpm')).status).toBe(200);
    await flushLogs(s);
    const before = await userRow(s, u.id);
    const refused = await chat(u.token.key, 'lim-rpm');
    expect(refused.status).toBe(429);
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    const body = (await refused.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'new_api_error', param: '', code: null });
    expect(body.error.message).toMatch(
      /^Request rate limit reached: this key may send 3 requests per minute \(request id: /,
    );
    expect(sentTo(up, 'lim-rpm')).toBe(3);
    await flushLogs(s);
    expect(await userRow(s, u.id)).toEqual(before);
    expect((await logsOf(s, u.id)).filter((l) => l.type === 2)).toHaveLength(3);

    // the token list's view: used / limit
    const list = await u.client.get(`/api/token/limits?ids=${u.token.id},999999`);
    expect(list.body).toMatchObject({
      success: true,
      data: { [u.token.id]: { rpm: { limit: 3, used: 3, scope: 'token' }, tpm: null, budget: null } },
    });
    expect(Object.keys(list.body.data)).toEqual([String(u.token.id)]);
  });

  it('the routes refuse bad input and other users’ tokens, and change nothing then', async () => {
    const u = await consoleUserWithToken();
    expect((await u.client.put(`/api/token/${u.token.id}/limits`, { tpm: 500 })).body.success).toBe(true);
    const bad = await u.client.put(`/api/token/${u.token.id}/limits`, { tpm: -5, rpm: 2 });
    expect(bad.body).toEqual({ success: false, message: 'tpm must be a whole number of 0 or more' });
    const period = await u.client.put(`/api/token/${u.token.id}/limits`, { budget: 5, period: 'hourly' });
    expect(period.body.success).toBe(false);
    const other = await registerAndLogin(s);
    expect((await other.client.put(`/api/token/${u.token.id}/limits`, { rpm: 1 })).body).toEqual({
      success: false,
      message: '令牌不存在',
    });
    // a common user may not set a user's limits (the admin guard's refusal)
    expect((await other.client.put(`/api/user/${u.id}/limits`, { rpm: 1 })).body.success).toBe(false);
    expect(
      await s.ctx.db
        .selectFrom('usage_limits')
        .selectAll()
        .where('scope', '=', 'user')
        .where('target_id', '=', u.id)
        .execute(),
    ).toEqual([]);
    const row = await s.ctx.db
      .selectFrom('usage_limits')
      .selectAll()
      .where('scope', '=', 'token')
      .where('target_id', '=', u.token.id)
      .execute();
    expect(row.map((r) => JSON.parse(r.limits))).toEqual([{ tpm: 500 }]);
    expect((await u.client.get(`/api/token/${u.token.id}/limits`)).body.data.settings).toEqual({ tpm: 500 });
    // all zero: the row goes
    expect((await u.client.put(`/api/token/${u.token.id}/limits`, { tpm: 0 })).body.success).toBe(true);
    expect(
      await s.ctx.db
        .selectFrom('usage_limits')
        .selectAll()
        .where('target_id', '=', u.token.id)
        .where('scope', '=', 'token')
        .execute(),
    ).toEqual([]);
  });

  it('TPM counts the reservation bound before the call and the usage after it', async () => {
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    await usageLimits(s.ctx).save('token', t.id, { tpm: 200 });
    // alone in its window, a request is admitted whatever its bound (max_tokens 1000); settled, it counts its usage
    expect((await chat(t.key, 'lim-tpm', { max_tokens: 1000 })).status).toBe(200);
    await flushLogs(s);
    expect(await usageLimits(s.ctx).counters.read([`lim:k:t${t.id}`])).toEqual([18]); // 11 + 7 (mock usage)
    // 18 + a bound over 1000 would pass 200: refused before the upstream
    const refused = await chat(t.key, 'lim-tpm', { max_tokens: 1000 });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as any).error.message).toContain('may use 200 tokens per minute');
    // a small bound still fits because the first request was corrected from 1000+ to 18
    expect((await chat(t.key, 'lim-tpm', { max_tokens: 20 })).status).toBe(200);
    await flushLogs(s);
    expect(await usageLimits(s.ctx).counters.read([`lim:k:t${t.id}`])).toEqual([36]);
    expect(sentTo(up, 'lim-tpm')).toBe(2);
  });

  it('a daily budget refuses once spent, with Retry-After to midnight, and resets the next day (fixed clock)', async () => {
    const limits = usageLimits(s.ctx);
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    const put = await root.put(`/api/user/${u.id}/limits`, { budget: 10, period: 'daily' });
    expect(put.body).toMatchObject({ success: true, data: { settings: { budget: 10, period: 'daily' } } });
    const evening = new Date(2031, 4, 20, 23, 0, 0).getTime();
    limits.now = () => evening;
    try {
      expect((await chat(t.key, 'lim-budget')).status).toBe(200);
      await flushLogs(s);
      const charged = (await logsOf(s, u.id)).reduce((n, l) => n + l.quota, 0);
      expect(charged).toBeGreaterThanOrEqual(10);
      const status = (await root.get(`/api/user/${u.id}/limits`)).body.data.status;
      expect(status.budget).toEqual({
        limit: 10,
        used: charged,
        scope: 'user',
        period: 'daily',
        reset: 'calendar',
        resetAt: new Date(2031, 4, 21).getTime() / 1000,
      });
      const refused = await chat(t.key, 'lim-budget');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('3600');
      expect(((await refused.json()) as any).error.message).toContain(
        'Budget used up: this user has spent its daily budget of $0.000020',
      );
      expect(sentTo(up, 'lim-budget')).toBe(1);

      limits.now = () => evening + 2 * 3600_000; // 01:00 the next day
      expect((await chat(t.key, 'lim-budget')).status).toBe(200);
      expect(sentTo(up, 'lim-budget')).toBe(2);
    } finally {
      limits.now = Date.now;
    }
  });

  it('a rolling budget starts with its first charge, refuses until its window ends, then starts again', async () => {
    const limits = usageLimits(s.ctx);
    const u = await consoleUserWithToken();
    const put = await u.client.put(`/api/token/${u.token.id}/limits`, {
      budget: 10,
      period: 'daily',
      reset: 'rolling',
    });
    expect(put.body).toMatchObject({
      success: true,
      data: {
        settings: { budget: 10, period: 'daily', reset: 'rolling' },
        // not charged yet: no window, so no reset time
        status: { budget: { limit: 10, used: 0, period: 'daily', reset: 'rolling', resetAt: null } },
      },
    });
    const first = Date.UTC(2033, 6, 14, 15, 20, 0); // an afternoon: a calendar day would end in hours, not 24
    limits.now = () => first;
    try {
      expect((await chat(u.token.key, 'lim-rolling')).status).toBe(200);
      await flushLogs(s);
      const charged = (await logsOf(s, u.id)).reduce((n, l) => n + l.quota, 0);
      expect(charged).toBeGreaterThanOrEqual(10);
      const windowEnd = first + 86_400_000;
      const status = async () => (await u.client.get(`/api/token/${u.token.id}/limits`)).body.data.status.budget;
      expect(await status()).toEqual({
        limit: 10,
        used: charged,
        scope: 'token',
        period: 'daily',
        reset: 'rolling',
        resetAt: windowEnd / 1000,
      });

      limits.now = () => first + 5 * 3600_000;
      const refused = await chat(u.token.key, 'lim-rolling');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe(String(19 * 3600));
      expect(((await refused.json()) as any).error.message).toContain(
        'Budget used up: this key has spent its rolling daily budget of $0.000020; it resets at ' +
          new Date(windowEnd).toISOString(),
      );
      expect(sentTo(up, 'lim-rolling')).toBe(1);
      // the token list shows the same reset time
      const list = await u.client.get(`/api/token/limits?ids=${u.token.id}`);
      expect(list.body.data[u.token.id].budget).toMatchObject({ reset: 'rolling', resetAt: windowEnd / 1000 });

      // the window ends 24 hours after the first charge (not at midnight): admitted, and a new window from then
      limits.now = () => windowEnd - 1;
      expect((await chat(u.token.key, 'lim-rolling')).status).toBe(429);
      const later = windowEnd + 60_000;
      limits.now = () => later;
      expect(await status()).toMatchObject({ used: 0, resetAt: null });
      expect((await chat(u.token.key, 'lim-rolling')).status).toBe(200);
      await flushLogs(s);
      expect(await status()).toMatchObject({ used: charged, resetAt: (later + 86_400_000) / 1000 });
      expect(sentTo(up, 'lim-rolling')).toBe(2);
    } finally {
      limits.now = Date.now;
    }
  });

  it('the site time zone decides where a budget’s day starts; an unknown zone is refused and changes nothing', async () => {
    const limits = usageLimits(s.ctx);
    await setOption(root, 'UsageLimitTimeZone', 'Asia/Shanghai');
    try {
      for (const bad of ['Mars/Olympus', 'Asia/Shanghai ', 'UTC+8'])
        expect((await root.put('/api/option/', { key: 'UsageLimitTimeZone', value: bad })).body).toEqual({
          success: false,
          message: `${bad} 不是有效的时区名称（IANA 格式，如 Asia/Shanghai）`,
        });
      expect(s.ctx.options.get('UsageLimitTimeZone')).toBe('Asia/Shanghai');
      expect((await root.get('/api/option/')).body.data).toContainEqual({
        key: 'UsageLimitTimeZone',
        value: 'Asia/Shanghai',
      });

      const u = await addUser(s);
      const t = await addToken(s, u.id);
      await root.put(`/api/user/${u.id}/limits`, { budget: 10, period: 'daily' });
      // 15:30 UTC is 23:30 in Shanghai: the day ends in half an hour, at 16:00 UTC, whatever the server's zone
      const lateInShanghai = Date.UTC(2031, 7, 20, 15, 30);
      limits.now = () => lateInShanghai;
      expect((await chat(t.key, 'lim-zone')).status).toBe(200);
      await flushLogs(s);
      const status = (await root.get(`/api/user/${u.id}/limits`)).body.data.status;
      expect(status.budget).toMatchObject({ reset: 'calendar', resetAt: Date.UTC(2031, 7, 20, 16) / 1000 });
      const refused = await chat(t.key, 'lim-zone');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1800');
      limits.now = () => Date.UTC(2031, 7, 20, 16, 0, 1); // 00:00:01 on the 21st in Shanghai
      expect((await chat(t.key, 'lim-zone')).status).toBe(200);

      // back to the server's zone (empty): accepted
      await setOption(root, 'UsageLimitTimeZone', '');
      expect(s.ctx.options.get('UsageLimitTimeZone')).toBe('');
    } finally {
      limits.now = Date.now;
      await setOptions(s, { UsageLimitTimeZone: '' });
    }
  });

  it('group defaults apply to each user of the group; a user setting overrides them, a token setting both', async () => {
    await setOptions(s, { UsageLimitGroupDefaults: { vip: { rpm: 1 } } });
    try {
      const a = await addUser(s, { group: 'vip' });
      const b = await addUser(s, { group: 'vip' });
      const ta = await addToken(s, a.id);
      const tb = await addToken(s, b.id);
      expect((await chat(ta.key, 'lim-group')).status).toBe(200);
      expect((await chat(ta.key, 'lim-group')).status).toBe(429);
      expect((await chat(tb.key, 'lim-group')).status).toBe(200); // the default counts per user

      const c = await addUser(s, { group: 'vip' });
      const tc = await addToken(s, c.id);
      await root.put(`/api/user/${c.id}/limits`, { rpm: 3 });
      const tc2 = await addToken(s, c.id);
      await usageLimits(s.ctx).save('token', tc2.id, { rpm: 5 });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await chat(tc.key, 'lim-group')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      // the token's own limit, on its own counter
      for (let i = 0; i < 5; i++) expect((await chat(tc2.key, 'lim-group')).status).toBe(200);
      expect((await chat(tc2.key, 'lim-group')).status).toBe(429);

      // a user outside every setting costs no counter at all
      const counters = usageLimits(s.ctx).counters as MemoryCounters;
      const free = await addToken(s, (await addUser(s)).id);
      const size = counters.size;
      expect((await chat(free.key, 'lim-group')).status).toBe(200);
      expect(counters.size).toBe(size);
    } finally {
      await setOptions(s, { UsageLimitGroupDefaults: {} });
    }
  });

  it('a channel past its daily token cap is skipped for another one until the next day', async () => {
    const limits = usageLimits(s.ctx);
    const noon = new Date(2032, 2, 3, 12, 0, 0).getTime();
    limits.now = () => noon;
    try {
      const t = await addToken(s, (await addUser(s)).id);
      expect((await chat(t.key, 'lim-cap')).status).toBe(200);
      await flushLogs(s);
      expect(sentTo(capped, 'lim-cap')).toBe(1); // 18 tokens: past its cap of 10
      expect((await chat(t.key, 'lim-cap')).status).toBe(200);
      expect((await chat(t.key, 'lim-cap')).status).toBe(200);
      expect(sentTo(capped, 'lim-cap')).toBe(1);
      expect(sentTo(up, 'lim-cap')).toBe(2);
      limits.now = () => noon + 86_400_000;
      expect((await chat(t.key, 'lim-cap')).status).toBe(200);
      expect(sentTo(capped, 'lim-cap')).toBe(2);
    } finally {
      limits.now = Date.now;
    }
  });
});
