import { describe, expect, it } from 'vitest';
import {
  addCustomModels,
  baseUrlEndsWithV1,
  buildTagEditPayload,
  channelToForm,
  checkChannelForm,
  defaultChannelForm,
  groupByTag,
  keyLineCount,
  parseInlinePriority,
  parseInlineWeight,
  parseMaxInputTokens,
  parseStatusInfo,
  responseTimeColor,
  type Channel,
  type ChannelFormValues,
} from './logic.js';

const form = (over: Partial<ChannelFormValues>): ChannelFormValues => ({ ...defaultChannelForm(), ...over });

describe('checkChannelForm', () => {
  it('requires name and key on create, models always', () => {
    expect(checkChannelForm(form({ key: 'k', models: ['m'] }))).toEqual({ ok: false, error: 'err.nameKey' });
    expect(checkChannelForm(form({ name: 'n', models: ['m'] }))).toEqual({ ok: false, error: 'err.nameKey' });
    expect(checkChannelForm(form({ name: 'n', key: 'k' }))).toEqual({ ok: false, error: 'err.models' });
    // on edit an empty key keeps the stored one
    const edit = checkChannelForm(form({ name: 'n', models: ['m'] }), 7);
    expect(edit.ok && edit.payload).toMatchObject({ id: 7, name: 'n' });
    expect(edit.ok && 'key' in edit.payload).toBe(false);
  });

  it('rejects invalid JSON model mapping', () => {
    const r = checkChannelForm(form({ name: 'n', key: 'k', models: ['m'], model_mapping: '{"a":' }));
    expect(r).toEqual({ ok: false, error: 'err.mapping' });
    expect(checkChannelForm(form({ name: 'n', key: 'k', models: ['m'], model_mapping: '[1]' }))).toEqual({
      ok: false,
      error: 'err.mapping',
    });
  });

  it('builds the wire payload: comma lists, integers, stripped slash, spark default version', () => {
    const r = checkChannelForm(
      form({
        type: 18,
        name: ' spark ',
        key: 'a|b|c\n\n d|e|f \n',
        models: ['m1', 'm2'],
        groups: ['default', 'vip'],
        base_url: 'https://example.com///',
        priority: '5',
        weight: '3',
        auto_ban: false,
        model_mapping: '{"a":"b"}',
      }),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.payload).toMatchObject({
      type: 18,
      name: 'spark',
      key: 'a|b|c\nd|e|f',
      models: 'm1,m2',
      group: 'default,vip',
      base_url: 'https://example.com',
      other: 'v2.1',
      priority: 5,
      weight: 3,
      auto_ban: 0,
      model_mapping: '{"a":"b"}',
    });
    expect(r.confirmV1).toBe(false);
  });

  it('flags a /v1 base URL for confirmation and needs a base URL for custom and Azure types', () => {
    const r = checkChannelForm(form({ name: 'n', key: 'k', models: ['m'], base_url: 'https://up.example/v1/' }));
    expect(r.ok && r.confirmV1).toBe(true);
    expect(r.ok && r.payload.base_url).toBe('https://up.example/v1');
    expect(baseUrlEndsWithV1('https://x/v1beta')).toBe(false);
    expect(checkChannelForm(form({ type: 8, name: 'n', key: 'k', models: ['m'] }))).toEqual({
      ok: false,
      error: 'err.baseUrl',
    });
    expect(checkChannelForm(form({ type: 3, name: 'n', key: 'k', models: ['m'] }))).toEqual({
      ok: false,
      error: 'err.baseUrl',
    });
  });

  it('keeps the organization only for OpenAI and the Vertex key as one JSON document', () => {
    const a = checkChannelForm(form({ type: 25, name: 'n', key: 'k', models: ['m'], openai_organization: 'org-1' }));
    expect(a.ok && a.payload.openai_organization).toBe('');
    const json = JSON.stringify(
      {
        type: 'service_account',
        project_id: 'p',
        private_key_id: 'k',
        private_key: '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n',
        client_email: 'a@p.iam.gserviceaccount.com',
      },
      null,
      2,
    );
    const v = checkChannelForm(form({ type: 41, name: 'n', key: json, models: ['m'], other: 'us-central1' }));
    expect(v.ok && v.payload.key).toBe(json);
    expect(keyLineCount(json, 41)).toBe(1);
    expect(keyLineCount('a\nb\n\nc', 1)).toBe(3);
  });
});

describe('setting and max_input_tokens', () => {
  const ok = form({ name: 'n', key: 'k', models: ['m'] });
  it('validates setting as a JSON object like the other JSON fields', () => {
    expect(checkChannelForm({ ...ok, setting: '{"proxy":' })).toEqual({ ok: false, error: 'err.setting' });
    expect(checkChannelForm({ ...ok, setting: '[1]' })).toEqual({ ok: false, error: 'err.setting' });
    const r = checkChannelForm({ ...ok, setting: ' {"thinking_to_content":true} ' });
    expect(r.ok && r.payload.setting).toBe('{"thinking_to_content":true}');
    const empty = checkChannelForm(ok);
    expect(empty.ok && empty.payload.setting).toBe('');
  });
  it('sends max_input_tokens as a non-negative integer, empty as 0', () => {
    expect(parseMaxInputTokens('')).toBe(0);
    expect(parseMaxInputTokens(null)).toBe(0);
    expect(parseMaxInputTokens('4096')).toBe(4096);
    expect(parseMaxInputTokens(-1)).toBeNull();
    expect(parseMaxInputTokens('1.5')).toBeNull();
    const r = checkChannelForm({ ...ok, max_input_tokens: 8192 });
    expect(r.ok && r.payload.max_input_tokens).toBe(8192);
    expect(checkChannelForm({ ...ok, max_input_tokens: '-5' })).toEqual({ ok: false, error: 'err.maxInputTokens' });
  });
  it('reads both fields back from a channel', () => {
    const ch = {
      id: 1,
      type: 1,
      name: 'a',
      models: 'm',
      group: 'default',
      setting: '{"proxy":"socks5://x"}',
      max_input_tokens: 1000,
    } as Channel;
    expect(channelToForm(ch)).toMatchObject({ setting: '{"proxy":"socks5://x"}', max_input_tokens: 1000 });
    expect(channelToForm({ ...ch, setting: null, max_input_tokens: null })).toMatchObject({
      setting: '',
      max_input_tokens: 0,
    });
  });
});

describe('models and inline edits', () => {
  it('adds custom models and reports duplicates', () => {
    expect(addCustomModels(['a'], 'b, c\na')).toEqual({ models: ['a', 'b', 'c'], duplicated: true, added: 2 });
    expect(addCustomModels(['a'], 'a')).toEqual({ models: ['a'], duplicated: true, added: 0 });
  });
  it('validates inline priority and weight', () => {
    expect(parseInlinePriority('10')).toBe(10);
    expect(parseInlinePriority('-999')).toBe(-999);
    expect(parseInlinePriority('-1000')).toBeNull();
    expect(parseInlinePriority('1.5')).toBeNull();
    expect(parseInlinePriority('abc')).toBeNull();
    expect(parseInlineWeight('0')).toBe(0);
    expect(parseInlineWeight('-1')).toBeNull();
    expect(parseInlineWeight('2.5')).toBeNull();
  });
});

describe('buildTagEditPayload', () => {
  const base = { new_tag: 'team', priority: null, weight: null, model_mapping: '', models: [], groups: [] };
  it('refuses an unchanged form', () => {
    expect(buildTagEditPayload('team', base)).toEqual({ ok: false, error: 'err.noChange' });
  });
  it('sends only changed fields, validates JSON, and allows dissolving', () => {
    expect(buildTagEditPayload('team', { ...base, model_mapping: 'nope' })).toEqual({
      ok: false,
      error: 'err.mapping',
    });
    expect(buildTagEditPayload('team', { ...base, new_tag: '' })).toEqual({
      ok: true,
      payload: { tag: 'team', new_tag: '' },
    });
    expect(
      buildTagEditPayload('team', { ...base, priority: 3, weight: 0, models: ['a', 'b'], groups: ['vip'] }),
    ).toEqual({
      ok: true,
      payload: { tag: 'team', priority: 3, weight: 0, models: 'a,b', groups: 'vip' },
    });
    expect(buildTagEditPayload('team', { ...base, weight: -2 })).toEqual({ ok: false, error: 'err.weight' });
  });
});

describe('display rules', () => {
  it('grades response time', () => {
    expect(responseTimeColor(0).label).toBe('untested');
    expect(responseTimeColor(1000).color).toBe('green');
    expect(responseTimeColor(2500).color).toBe('lime');
    expect(responseTimeColor(5000).color).toBe('gold');
    expect(responseTimeColor(5001).color).toBe('red');
  });
  it('reads the auto-disable reason', () => {
    expect(parseStatusInfo('{"status_reason":"401 invalid key","status_time":1700000000}')).toEqual({
      reason: '401 invalid key',
      time: 1700000000,
    });
    expect(parseStatusInfo('garbage')).toEqual({});
  });
  it('groups tagged channels under one row in tag mode', () => {
    const ch = (id: number, tag: string | null) => ({ id, tag }) as Channel;
    const rows = groupByTag([ch(1, 'a'), ch(2, null), ch(3, 'a'), ch(4, 'b')]);
    expect(rows.map((r) => r.rowKey)).toEqual(['t:a', 'c2', 't:b']);
    expect((rows[0] as { children: Channel[] }).children.map((c) => c.id)).toEqual([1, 3]);
  });
});

// The vendors' own field rules are the server's (POST /api/channel/check, server/test/channels/channel-facts.test.ts);
// the form still shapes their keys: one channel per line, the Vertex key file whole, an edit's empty key left out.
describe('vendor keys in the payload', () => {
  const named = (over: Partial<ChannelFormValues>) => form({ name: 'n', models: ['m'], ...over });
  const SERVICE_ACCOUNT = {
    type: 'service_account',
    project_id: 'demo-project',
    private_key_id: 'abc123',
    private_key: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n',
    client_email: 'relay@demo-project.iam.gserviceaccount.com',
  };

  it('keeps one key per line for Anthropic and Bedrock', () => {
    const claude = checkChannelForm(named({ type: 14, key: 'sk-ant-api03-a\nsk-ant-api03-b' }));
    expect(claude.ok && claude.payload.key).toBe('sk-ant-api03-a\nsk-ant-api03-b');
    const bedrock = checkChannelForm(named({ type: 33, key: 'A|s|us-east-1\nB|s|us-west-2' }));
    expect(bedrock.ok && bedrock.payload).toMatchObject({ key: 'A|s|us-east-1\nB|s|us-west-2', base_url: '' });
  });

  it('keeps the Vertex key as one JSON document; on edit an empty key is not sent', () => {
    const key = JSON.stringify(SERVICE_ACCOUNT, null, 2);
    const created = checkChannelForm(named({ type: 41, key, other: 'us-central1' }));
    expect(created.ok && created.payload).toMatchObject({ key, other: 'us-central1' });
    const edited = checkChannelForm(named({ type: 41, key: '', other: 'global' }), 3);
    expect(edited.ok && 'key' in edited.payload).toBe(false);
  });
});
