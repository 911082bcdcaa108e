// Channel affinity (issue 44, new-api's channel_affinity_setting with its two default rules): Claude Code-shaped calls
// through the official Anthropic SDK stay on one of three channels while their metadata.user_id is the same, other
// user ids spread; a disabled sticky channel is left for another that then sticks; a failing sticky channel is answered
// as it failed under skip_retry_on_failure and retried elsewhere without it; a remembered channel is never taken outside
// the request's group or model; Codex's prompt_cache_key through the `openai` client's Responses call.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../helpers/mock-anthropic.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { openaiResponsesBehaviour } from '../relay-formats/responses-upstreams.js';
import { addChannel, addToken, addUser, channelsChanged, client, setOptions } from './fixtures.js';
import { relayServices } from '../../src/relay/services.js';
import { DEFAULT_RULES, RULES_KEY, type RuleJson } from '../../src/services/channel-affinity/setting.js';

const SONNET = 'claude-sonnet-4-6';
const OPUS = 'claude-opus-4-6';
const CODEX = 'gpt-5-codex';

/** Claude Code's user_id: the user's hash, the account and this conversation's session. */
const claudeCodeUser = (session: string) =>
  `user_4f1c2b8e9d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c_account__session_${session}`;

describe('channel affinity', () => {
  let s: TestServer;
  /** the three Anthropic channels for SONNET in the default group, by index */
  const claude: MockAnthropic[] = [];
  const claudeIds: number[] = [];
  /** a channel for SONNET in the vip group only, and one for OPUS only (default group) */
  let vipOnly: MockAnthropic;
  let opusOnly: MockAnthropic;
  let opusId: number;
  const codex: MockUpstream[] = [];
  let key: string;
  let vipKey: string;
  let sonnetOnlyKey: string;

  beforeAll(async () => {
    s = await startTestServer();
    for (let i = 0; i < 3; i++) claude.push(await MockAnthropic.start());
    vipOnly = await MockAnthropic.start();
    opusOnly = await MockAnthropic.start();
    for (let i = 0; i < 2; i++) {
      const m = await MockUpstream.start();
      m.behave = openaiResponsesBehaviour;
      codex.push(m);
    }
    await setOptions(s, { ModelRatio: { [SONNET]: 1, [OPUS]: 1, [CODEX]: 1 }, RetryTimes: '3' });
    for (const m of claude)
      claudeIds.push(await addChannel(s, { type: 14, baseUrl: m.url, key: ANTHROPIC_MOCK_KEY, models: [SONNET] }));
    await addChannel(s, { type: 14, baseUrl: vipOnly.url, key: ANTHROPIC_MOCK_KEY, models: [SONNET], groups: ['vip'] });
    opusId = await addChannel(s, { type: 14, baseUrl: opusOnly.url, key: ANTHROPIC_MOCK_KEY, models: [OPUS] });
    for (const m of codex) await addChannel(s, { type: 1, baseUrl: m.url, models: [CODEX] });
    await channelsChanged(s);
    const user = await addUser(s, { quota: 1_000_000_000 });
    key = (await addToken(s, user.id)).key;
    const vip = await addUser(s, { quota: 1_000_000_000, group: 'vip' });
    vipKey = (await addToken(s, vip.id)).key;
    sonnetOnlyKey = (await addToken(s, user.id, { modelLimits: SONNET })).key;
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([...claude, vipOnly, opusOnly, ...codex].map((m) => m?.close()));
  });
  beforeEach(async () => {
    for (const m of [...claude, vipOnly, opusOnly]) m.reset();
    await setOptions(s, { [RULES_KEY]: DEFAULT_RULES });
    await relayServices(s.ctx).affinity.clear(null);
  });

  const sdk = (k = key) => new Anthropic({ apiKey: `sk-${k}`, baseURL: s.url, maxRetries: 0 });
  const ask = (session: string, opts: { key?: string; model?: string } = {}) =>
    sdk(opts.key).messages.create({
      model: opts.model ?? SONNET,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Refactor the parser' }],
      metadata: { user_id: claudeCodeUser(session) },
    });
  const counts = () => claude.map((m) => m.requests.length);
  /** the index of the one Claude channel whose request count moved during `f` */
  async function servedBy(f: () => Promise<unknown>): Promise<number> {
    const before = counts();
    await f();
    const moved = counts()
      .map((n, i) => n - before[i])
      .flatMap((d, i) => (d > 0 ? [i] : []));
    expect(moved).toHaveLength(1);
    return moved[0];
  }
  async function setStatus(id: number, status: number) {
    await s.ctx.db.updateTable('channels').set({ status }).where('id', '=', id).execute();
    await s.ctx.db
      .updateTable('abilities')
      .set({ enabled: status === 1 })
      .where('channel_id', '=', id)
      .execute();
    await channelsChanged(s);
  }
  const rules = (patch: Partial<RuleJson>) => setOptions(s, { [RULES_KEY]: [{ ...DEFAULT_RULES[1], ...patch }] });

  it('consecutive calls of one Claude Code session stay on one channel; other sessions spread', async () => {
    const first = await servedBy(() => ask('s-one'));
    for (let i = 0; i < 8; i++) expect(await servedBy(() => ask('s-one'))).toBe(first);
    expect(claude[first].requests.at(-1)!.body.metadata.user_id).toBe(claudeCodeUser('s-one'));
    // 30 other sessions: the first call of each is the normal weighted choice, its next calls go where it went
    const chosen = new Map<string, number>();
    for (let i = 0; i < 30; i++) chosen.set(`s-${i}`, await servedBy(() => ask(`s-${i}`)));
    expect(new Set(chosen.values()).size).toBeGreaterThan(1);
    for (const [session, index] of chosen) expect(await servedBy(() => ask(session))).toBe(index);
    // the key is new-api's: rule name, group, value
    const store = relayServices(s.ctx).affinity.store;
    expect(store.get(`claude cli trace:default:${claudeCodeUser('s-one')}`)).toBe(claudeIds[first]);
  });

  it('a disabled sticky channel is left for another, which then sticks (and stays after the first comes back)', async () => {
    const first = await servedBy(() => ask('s-disable'));
    await setStatus(claudeIds[first], 2);
    try {
      const next = await servedBy(() => ask('s-disable'));
      expect(next).not.toBe(first);
      for (let i = 0; i < 5; i++) expect(await servedBy(() => ask('s-disable'))).toBe(next);
      await setStatus(claudeIds[first], 1);
      for (let i = 0; i < 3; i++) expect(await servedBy(() => ask('s-disable'))).toBe(next);
    } finally {
      await setStatus(claudeIds[first], 1);
    }
  });

  it('a failing sticky channel with skip_retry_on_failure: the failure is answered, no other channel is tried', async () => {
    const first = await servedBy(() => ask('s-fail'));
    claude[first].behave = () => ({ kind: 'error', status: 500, type: 'api_error', message: 'upstream broke' });
    const before = counts();
    await expect(ask('s-fail')).rejects.toMatchObject({ status: 500 });
    expect(counts().map((n, i) => n - before[i])).toEqual([0, 1, 2].map((i) => (i === first ? 1 : 0)));
    // the entry stays: the next call goes to the same channel, and fails the same way
    await expect(ask('s-fail')).rejects.toMatchObject({ status: 500 });
    expect(claude[first].requests.length - before[first]).toBe(2);
    // a session with no remembered channel is retried as usual (affinity only stops the retries of a sticky call)
    claude[first].reset();
    for (const m of claude) m.behave = () => ({ kind: 'error', status: 500, type: 'api_error' });
    await expect(ask('s-fresh')).rejects.toMatchObject({ status: 500 });
    expect(claude.reduce((n, m) => n + m.requests.length, 0)).toBe(4);
  });

  it('a failing sticky channel without skip_retry_on_failure: retried elsewhere, and the channel that answered sticks', async () => {
    await rules({ skip_retry_on_failure: false });
    const first = await servedBy(() => ask('s-retry'));
    claude[first].behave = () => ({ kind: 'error', status: 500, type: 'api_error', message: 'upstream broke' });
    const before = counts();
    const answer = await ask('s-retry');
    expect(answer.type).toBe('message');
    const moved = counts().map((n, i) => n - before[i]);
    expect(moved[first]).toBe(1);
    const next = moved.findIndex((d, i) => d === 1 && i !== first);
    expect(next).toBeGreaterThanOrEqual(0);
    claude[first].behave = () => ({ kind: 'default' });
    for (let i = 0; i < 4; i++) expect(await servedBy(() => ask('s-retry'))).toBe(next);
  });

  it('switch_on_success off: the channel routed first stays remembered even when a retry answered', async () => {
    await rules({ skip_retry_on_failure: false });
    await setOptions(s, { 'channel_affinity_setting.switch_on_success': 'false' });
    try {
      const first = await servedBy(() => ask('s-noswitch'));
      claude[first].behave = () => ({ kind: 'error', status: 500, type: 'api_error' });
      await ask('s-noswitch');
      claude[first].behave = () => ({ kind: 'default' });
      for (let i = 0; i < 4; i++) expect(await servedBy(() => ask('s-noswitch'))).toBe(first);
    } finally {
      await setOptions(s, { 'channel_affinity_setting.switch_on_success': 'true' });
    }
  });

  it("never takes a remembered channel outside the request's group", async () => {
    // without the group in the key, a vip call and a default call of one session share the entry
    await rules({ include_using_group: false });
    await ask('s-group', { key: vipKey });
    expect(vipOnly.requests).toHaveLength(1);
    const store = relayServices(s.ctx).affinity.store;
    const suffix = `claude cli trace:${claudeCodeUser('s-group')}`;
    expect(store.get(suffix)).toBeGreaterThan(0);
    const served = await servedBy(() => ask('s-group'));
    expect(vipOnly.requests).toHaveLength(1);
    // the entry that could not be taken was replaced by the channel that answered
    expect(store.get(suffix)).toBe(claudeIds[served]);
  });

  it('never takes a remembered channel that does not serve the model, nor lets a token past its model limits', async () => {
    await rules({ model_regex: ['^claude-.*$'], include_model_name: false });
    await ask('s-model', { model: OPUS });
    expect(opusOnly.requests).toHaveLength(1);
    const suffix = `claude cli trace:default:${claudeCodeUser('s-model')}`;
    expect(relayServices(s.ctx).affinity.store.get(suffix)).toBe(opusId);
    // the session's next call names another model: the opus-only channel is not a choice for it
    await servedBy(() => ask('s-model'));
    expect(opusOnly.requests).toHaveLength(1);
    // a token limited to SONNET is refused OPUS whatever the session remembers
    await ask('s-model-2', { model: OPUS });
    expect(opusOnly.requests).toHaveLength(2);
    await expect(ask('s-model-2', { key: sonnetOnlyKey, model: OPUS })).rejects.toMatchObject({ status: 403 });
    expect(opusOnly.requests).toHaveLength(2);
  });

  it('a rule that does not match (another path, model or user agent) leaves the normal choice', async () => {
    await rules({ user_agent_include: ['claude-cli'] });
    // the SDK's user agent is not Claude Code's: nothing is remembered
    await ask('s-agent');
    expect((await relayServices(s.ctx).affinity.store.suffixes()).length).toBe(0);
    await rules({ user_agent_include: ['anthropic'] });
    await ask('s-agent');
    expect(await relayServices(s.ctx).affinity.store.suffixes()).toEqual([
      `claude cli trace:default:${claudeCodeUser('s-agent')}`,
    ]);
  });

  it("Codex's prompt_cache_key through the openai client's Responses call keeps one channel per key", async () => {
    const c = client(s, key);
    const reqs = () => codex.map((m) => m.requests.length);
    const call = async (cacheKey: string) => {
      const before = reqs();
      const r = await c.responses.create({ model: CODEX, input: 'Fix the failing test', prompt_cache_key: cacheKey });
      expect(r.status).toBe('completed');
      const moved = reqs().flatMap((n, i) => (n > before[i] ? [i] : []));
      expect(moved).toHaveLength(1);
      return moved[0];
    };
    const first = await call('codex-thread-1');
    for (let i = 0; i < 6; i++) expect(await call('codex-thread-1')).toBe(first);
    expect(codex[first].requests.at(-1)!.body.prompt_cache_key).toBe('codex-thread-1');
    const chosen = new Map<string, number>();
    for (let i = 0; i < 20; i++) chosen.set(`t-${i}`, await call(`t-${i}`));
    expect(new Set(chosen.values()).size).toBe(2);
    for (const [k, index] of chosen) expect(await call(k)).toBe(index);
  });
});
