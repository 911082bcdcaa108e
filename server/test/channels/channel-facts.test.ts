// The providers' channel facts (relay/providers/<name>/channel.ts, issue 41): each provider's rules for the key, the
// base URL and `other`, applied by channel saves and served to the console by POST /api/channel/check. The console's
// former checks (web/src/pages/channel/vendor-fields.test.ts) are here, now run by the server.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { channelFormProblem, ChannelInputError } from '../../src/services/channels.js';
import { channelFactsOf, relayableTypes } from '../../src/services/channel-protocols.js';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, startConsole } from './fixture.js';

const SERVICE_ACCOUNT = {
  type: 'service_account',
  project_id: 'demo-project',
  private_key_id: 'abc123',
  private_key: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n',
  client_email: 'relay@demo-project.iam.gserviceaccount.com',
};
const VERTEX_KEY = JSON.stringify(SERVICE_ACCOUNT);

const ANTHROPIC_KEY = 'Anthropic 密钥应以 sk-ant- 开头！使用代理时请填写代理地址';
const GEMINI_KEY = 'Gemini 密钥应以 AIza 开头！使用代理时请填写代理地址';
const BEDROCK_KEY = '密钥格式应为 AccessKeyId|SecretAccessKey|region，临时凭证再加 |SessionToken！';
const bedrockRegion = (r: string) => `密钥中的区域 ${r} 无效，例如：us-east-1！`;
const vertexLocation = (r: string) => `部署地区 ${r} 无效，例如：us-central1 或 global！`;
const NO_BASE_URL = '该渠道类型必须填写代理地址（Base URL）';
const BAD_BASE_URL = '代理地址（Base URL）必须是以 http:// 或 https:// 开头的合法地址';

/** The console's form as POST /api/channel/check receives it; the answer is the first refused field or null. */
const check = (type: number, key: string, base_url = '', other = '') =>
  channelFormProblem({ type, key, base_url, other });
const key = (message: string) => ({ field: 'key', message });
const other = (message: string) => ({ field: 'other', message });

describe('every relayable type has its provider facts', () => {
  it('each type the relay serves names its facts; the others have none', () => {
    for (const [type] of relayableTypes()) expect(channelFactsOf(type), String(type)).toBeDefined();
    // the task platforms' types (2, 5, 36) have the console's own facts; a type nobody serves has none
    expect(channelFactsOf(2)).toMatchObject({
      baseUrlRequired: true,
      models: { fixed: expect.arrayContaining(['mj_imagine']) },
    });
    expect(channelFactsOf(21)).toBeUndefined();
    expect(() => check(21, 'k')).toThrow(ChannelInputError);
  });

  it('a plain key is split into one channel per line; the Vertex key file is kept whole', () => {
    expect(channelFactsOf(1)).toMatchObject({ wholeKey: false, baseUrlRequired: false, keyHint: 'sk-...' });
    expect(channelFactsOf(41)).toMatchObject({ wholeKey: true, other: { kind: 'region_or_model_map' } });
    expect(channelFactsOf(3)).toMatchObject({ baseUrlRequired: true, other: { kind: 'api_version' } });
  });

  it('Vertex AI and Bedrock offer a fixed model list (their keys are never sent); balances where a vendor has one', () => {
    expect(channelFactsOf(41)!.models).toHaveProperty('fixed');
    expect(channelFactsOf(33)!.models).toHaveProperty('fixed');
    for (const type of [1, 14, 24, 4, 3]) expect(channelFactsOf(type)!.models, String(type)).toHaveProperty('list');
    for (const type of [1, 8, 20, 25, 40, 43]) expect(channelFactsOf(type)!.balance, String(type)).toBeDefined();
    for (const type of [3, 14, 24, 33, 41, 48]) expect(channelFactsOf(type)!.balance, String(type)).toBeUndefined();
  });
});

describe('OpenAI-compatible types, Azure and Ollama', () => {
  it('custom (8), Xinference (47) and Azure (3) need an http(s) base URL; the others do not', () => {
    for (const type of [3, 8, 47]) {
      expect(check(type, 'sk-1'), String(type)).toEqual({ field: 'base_url', message: NO_BASE_URL });
      expect(check(type, 'sk-1', 'ftp://up.example')).toEqual({ field: 'base_url', message: BAD_BASE_URL });
      expect(check(type, 'sk-1', 'https://up.example/')).toBeNull();
    }
    for (const type of [1, 4, 7, 20, 43]) expect(check(type, 'any key'), String(type)).toBeNull();
  });
});

describe('Anthropic (14) and Gemini (24) keys', () => {
  it('asks for the vendor prefix when the channel calls the vendor itself', () => {
    expect(check(14, 'sk-ant-api03-abc')).toBeNull();
    expect(check(14, 'sk-ant-api03-abc\nsk-proj-oops')).toEqual(key(ANTHROPIC_KEY));
    expect(check(14, 'sk-proj-oops', 'https://api.anthropic.com/')).toEqual(key(ANTHROPIC_KEY));
    expect(check(24, 'AIzaSyExample')).toBeNull();
    expect(check(24, 'sk-gemini')).toEqual(key(GEMINI_KEY));
  });

  it('accepts any key behind a proxy, and an empty key (edit keeps the stored one)', () => {
    expect(check(14, 'proxy-key', 'https://claude-proxy.example')).toBeNull();
    expect(check(24, 'proxy-key', 'https://gemini-proxy.example')).toBeNull();
    expect(check(14, '')).toBeNull();
  });
});

describe('Bedrock (33) keys', () => {
  it('takes AccessKeyId|SecretAccessKey|region, optionally |SessionToken', () => {
    expect(check(33, 'AKIAEXAMPLE|secret|us-east-1')).toBeNull();
    expect(check(33, 'ASIAEXAMPLE|secret|eu-west-3|token')).toBeNull();
    expect(check(33, 'AKIAEXAMPLE|secret')).toEqual(key(BEDROCK_KEY));
    expect(check(33, 'AKIAEXAMPLE||us-east-1')).toEqual(key(BEDROCK_KEY));
    expect(check(33, 'a|b|c|d|e')).toEqual(key(BEDROCK_KEY));
    expect(check(33, 'AKIAEXAMPLE|secret|us-east-1|')).toEqual(key(BEDROCK_KEY));
    expect(check(33, 'AKIAEXAMPLE|secret|Virginia')).toEqual(key(bedrockRegion('Virginia')));
  });

  it('checks every key line, one channel per line', () => {
    expect(check(33, 'A|s|us-east-1\nB|s|us-west-2')).toBeNull();
    expect(check(33, 'A|s|us-east-1\nB-s-us-west-2')).toEqual(key(BEDROCK_KEY));
  });
});

describe('Vertex AI (41)', () => {
  it('takes the service-account JSON key file and names missing fields', () => {
    const vertexKey = (k: string) => check(41, k, '', 'global');
    expect(vertexKey(JSON.stringify(SERVICE_ACCOUNT, null, 2))).toBeNull();
    expect(vertexKey('not json')).toEqual(key('Vertex AI 密钥必须是合法的 JSON 格式（服务账号密钥文件）'));
    expect(vertexKey('["a"]')).toEqual(key('Vertex AI 密钥必须是服务账号密钥文件的 JSON 对象'));
    expect(vertexKey(JSON.stringify({ ...SERVICE_ACCOUNT, type: 'authorized_user' }))).toEqual(
      key('Vertex AI 密钥的 type 必须是 service_account'),
    );
    const { private_key: _pk, client_email: _ce, ...partial } = SERVICE_ACCOUNT;
    expect(vertexKey(JSON.stringify(partial))).toEqual(key('Vertex AI 密钥缺少字段：private_key, client_email'));
    expect(vertexKey('{}')).toEqual(
      key('Vertex AI 密钥缺少字段：project_id, private_key_id, private_key, client_email'),
    );
    expect(vertexKey(JSON.stringify({ ...SERVICE_ACCOUNT, private_key: 'abc' }))).toEqual(
      key('Vertex AI 密钥的 private_key 不是 PEM 格式的私钥'),
    );
  });

  it('takes one region, or a JSON map per model with a default', () => {
    const region = (o: string) => check(41, VERTEX_KEY, '', o);
    expect(region('us-central1')).toBeNull();
    expect(region('global')).toBeNull();
    expect(region('{"default":"us-east5","gemini-2.5-pro":"global"}')).toBeNull();
    expect(region('  ')).toEqual(other('部署地区不能为空'));
    expect(region('US Central')).toEqual(other(vertexLocation('US Central')));
    expect(region('{"default": "us-east5"')).toEqual(other('部署地区必须是合法的 JSON 格式'));
    expect(region('{"claude-3-5-sonnet": "us-east5"}')).toEqual(other('部署地区必须包含default字段'));
    expect(region('{"default": 5}')).toEqual(other(vertexLocation('5')));
  });

  it('checks the region before the key; on edit an empty key is not checked', () => {
    expect(check(41, '{}', '', '')).toEqual(other('部署地区不能为空'));
    expect(check(41, '', '', 'global')).toBeNull();
  });
});

await describeEachDb('channel facts on save and through POST /api/channel/check', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(async () => {
    await server.ctx.db.deleteFrom('abilities').execute();
    await server.ctx.db.deleteFrom('channels').execute();
  });

  const rows = () => server.ctx.db.selectFrom('channels').select(['type', 'key', 'other']).orderBy('id').execute();

  it('answers the first refused field with the message a save would give, for administrators only', async () => {
    const refused = await root.post('/api/channel/check', { type: 33, key: 'AKIAEXAMPLE|secret', base_url: '' });
    expect(refused.body).toEqual({ success: false, message: BEDROCK_KEY, data: { field: 'key' } });
    const saved = await root.post('/api/channel/', { name: 'b', type: 33, key: 'AKIAEXAMPLE|secret', models: 'm' });
    expect(saved.body).toEqual({ success: false, message: BEDROCK_KEY });
    expect((await root.post('/api/channel/check', { type: 41, key: VERTEX_KEY, other: 'Iowa' })).body).toEqual({
      success: false,
      message: vertexLocation('Iowa'),
      data: { field: 'other' },
    });
    expect((await root.post('/api/channel/check', { type: 33, key: 'A|s|us-east-1' })).body).toEqual({
      success: true,
      message: '',
    });
    expect((await root.post('/api/channel/check', { type: 21, key: 'k' })).body.success).toBe(false);
    const { client } = await addUser(server, { role: 1 });
    expect((await client.post('/api/channel/check', { type: 33, key: 'A|s|us-east-1' })).body.success).toBe(false);
    expect(await rows()).toEqual([]);
  });

  it('refuses on create what the console refused before saving, and writes nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 14, key: 'sk-proj-oops' }, ANTHROPIC_KEY],
      [{ type: 24, key: 'AIzaSyA\nsk-gemini' }, GEMINI_KEY],
      [{ type: 33, key: 'A|s|Virginia' }, bedrockRegion('Virginia')],
      [{ type: 41, key: VERTEX_KEY, other: 'US Central' }, vertexLocation('US Central')],
      [{ type: 41, key: VERTEX_KEY, other: '{"default": 5}' }, vertexLocation('5')],
    ];
    for (const [body, message] of cases) {
      const res = await root.post('/api/channel/', { name: 'c', models: 'm', ...body });
      expect(res.body, JSON.stringify(body)).toEqual({ success: false, message });
    }
    expect(await rows()).toEqual([]);
    // behind a proxy any key shape goes through
    const proxied = await root.post('/api/channel/', {
      name: 'p',
      type: 14,
      key: 'proxy-key',
      base_url: 'https://claude-proxy.example',
      models: 'm',
    });
    expect(proxied.body.success, JSON.stringify(proxied.body)).toBe(true);
  });

  it('refuses an edit that sets a bad key or region, or switches to a type the kept key does not fit', async () => {
    const created = await root.post('/api/channel/', {
      name: 'vx',
      type: 41,
      key: VERTEX_KEY,
      other: 'us-central1',
      models: 'm',
    });
    const vx = created.body.data.ids[0];
    const oa = (await root.post('/api/channel/', { name: 'oa', type: 1, key: 'sk-x', models: 'm' })).body.data.ids[0];
    const refused: Array<[Record<string, unknown>, string]> = [
      [{ id: vx, other: 'Iowa' }, vertexLocation('Iowa')],
      [{ id: oa, type: 14 }, ANTHROPIC_KEY],
      [{ id: oa, type: 33, key: 'A|s' }, BEDROCK_KEY],
    ];
    for (const [body, message] of refused) {
      expect((await root.put('/api/channel/', body)).body, JSON.stringify(body)).toEqual({ success: false, message });
    }
    // an edit of another field goes through, and a switch with a fitting key
    expect((await root.put('/api/channel/', { id: vx, priority: 2 })).body.success).toBe(true);
    expect((await root.put('/api/channel/', { id: oa, type: 33, key: 'A|s|us-east-1' })).body.success).toBe(true);
    expect(await rows()).toEqual([
      { type: 41, key: VERTEX_KEY, other: 'us-central1' },
      { type: 33, key: 'A|s|us-east-1', other: '' },
    ]);
  });
});
