// The console's "fetch models" for the vendors whose list is not OpenAI's: Gemini's native list (paged, only models
// that generate content or embed, names without `models/`), Anthropic's (paged with after_id), and the fixed lists of
// Vertex AI and AWS Bedrock, whose keys (a service-account JSON, an AWS secret) are never sent anywhere. And the
// console's channel test of a Bedrock and a Vertex AI channel, against mocks that check the signature and the token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { DEFAULT_GEMINI_MODELS, GEMINI_MOCK_KEY, MockGemini } from '../helpers/mock-gemini.js';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../helpers/mock-anthropic.js';
import { MockVertex } from '../helpers/mock-vertex.js';
import { MockBedrock } from '../helpers/mock-bedrock.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addUser, channelsChanged, setOptions } from './fixtures.js';
import { VERTEX_MODELS } from '../../src/relay/providers/vertex/channel.js';
import { BEDROCK_MODELS } from '../../src/relay/providers/bedrock/models.js';

const BEDROCK_SECRET = 'bedrock-secret-never-sent';
const BEDROCK_KEY = `AKIDPROBE|${BEDROCK_SECRET}|us-east-1`;

/** Everything a request put on the wire, for looking for a secret in it. */
const wireText = (r: { method: string; path: string; headers: Record<string, unknown>; raw: unknown }) =>
  [r.method, r.path, JSON.stringify(r.headers), String(r.raw)].join('\n');

describe('fetch_models for Gemini, Anthropic and Vertex AI channels', () => {
  let s: TestServer;
  let gemini: MockGemini;
  let anthropic: MockAnthropic;
  let vertex: MockVertex;
  let bedrock: MockBedrock;
  /** a catch-all upstream: any request a key-leaking model list would send lands here */
  let sink: MockUpstream;
  let adminHeaders: Record<string, string>;

  beforeAll(async () => {
    [gemini, anthropic, vertex, bedrock, sink] = await Promise.all([
      MockGemini.start(),
      MockAnthropic.start(),
      MockVertex.start(),
      MockBedrock.start({ accessKeyId: 'AKIDPROBE', secretAccessKey: BEDROCK_SECRET, region: 'us-east-1' }),
      MockUpstream.start(),
    ]);
    s = await startTestServer({ env: { VERTEX_TOKEN_URL: vertex.tokenUrl } });
    const admin = await addUser(s, { role: 100, username: 'models-admin' });
    await s.ctx.db
      .updateTable('users')
      .set({ access_token: 'models-admin-token' })
      .where('id', '=', admin.id)
      .execute();
    adminHeaders = { authorization: 'models-admin-token', 'new-api-user': String(admin.id) };
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([gemini?.close(), anthropic?.close(), vertex?.close(), bedrock?.close(), sink?.close()]);
  });

  async function fetchModels(id: number) {
    const r = await fetch(`${s.url}/api/channel/fetch_models/${id}`, { headers: adminHeaders });
    return (await r.json()) as { success: boolean; message: string; data?: string[] };
  }

  it('lists a Gemini channel from GET /v1beta/models with x-goog-api-key, every page, chat and embedding models', async () => {
    gemini.reset();
    // more models than one page holds, plus models the relay cannot use (no generateContent / embedContent)
    const extra = Array.from({ length: 1100 }, (_, i) => ({
      ...DEFAULT_GEMINI_MODELS[0],
      name: `models/gemini-extra-${i}`,
    }));
    const aqa = { ...DEFAULT_GEMINI_MODELS[0], name: 'models/aqa', supportedGenerationMethods: ['generateAnswer'] };
    const imagen = { ...DEFAULT_GEMINI_MODELS[0], name: 'models/imagen-3.0', supportedGenerationMethods: ['predict'] };
    gemini.models = [...DEFAULT_GEMINI_MODELS, aqa, imagen, ...extra];
    const id = await addChannel(s, {
      type: 24,
      baseUrl: gemini.url,
      key: `${GEMINI_MOCK_KEY}\nsecond-key`,
      models: ['x'],
    });
    await channelsChanged(s);
    const r = await fetchModels(id);
    expect(r.success).toBe(true);
    expect(r.data!.slice(0, 6)).toEqual([
      'gemini-2.5-pro',
      'gemini-2.5-flash',
      'gemini-2.0-flash',
      'gemini-1.5-flash',
      'gemini-embedding-001',
      'text-embedding-004',
    ]);
    expect(r.data).toHaveLength(6 + 1100);
    expect(r.data).not.toContain('aqa');
    expect(r.data).not.toContain('imagen-3.0');
    expect(r.data!.at(-1)).toBe('gemini-extra-1099');
    // two pages, the key in the header only (the first of a multi-key channel), never in the URL
    expect(gemini.requests).toHaveLength(2);
    for (const req of gemini.requests) {
      expect(req.method).toBe('GET');
      expect(req.path).toMatch(/^\/v1beta\/models\?pageSize=1000/);
      expect(req.path).not.toContain(GEMINI_MOCK_KEY);
      expect(req.headers['x-goog-api-key']).toBe(GEMINI_MOCK_KEY);
      expect(req.headers.authorization).toBeUndefined();
    }
    expect(gemini.requests[1].path).toContain('pageToken=');
  });

  it('reports a Gemini key the upstream refuses', async () => {
    gemini.reset();
    const id = await addChannel(s, { type: 24, baseUrl: gemini.url, key: 'wrong-key', models: ['x'] });
    await channelsChanged(s);
    const r = await fetchModels(id);
    expect(r.success).toBe(false);
    expect(r.message).toContain('获取模型列表失败');
  });

  it('lists an Anthropic channel from GET /v1/models with x-api-key and anthropic-version, paged with after_id', async () => {
    anthropic.reset();
    const base = anthropic.models;
    const extra = Array.from({ length: 1001 }, (_, i) => ({ ...base[0], id: `claude-extra-${i}` }));
    anthropic.models = [...base, ...extra];
    const id = await addChannel(s, { type: 14, baseUrl: anthropic.url, key: ANTHROPIC_MOCK_KEY, models: ['x'] });
    await channelsChanged(s);
    const r = await fetchModels(id);
    expect(r.success).toBe(true);
    expect(r.data).toEqual([...base.map((m) => m.id), ...extra.map((m) => m.id)]);
    const lists = anthropic.requests.filter((q) => q.path.startsWith('/v1/models'));
    expect(lists).toHaveLength(2);
    expect(lists[0].path).toBe('/v1/models?limit=1000');
    expect(lists[1].path).toBe(`/v1/models?limit=1000&after_id=${anthropic.models[999].id}`);
    for (const q of lists) {
      expect(q.headers['x-api-key']).toBe(ANTHROPIC_MOCK_KEY);
      expect(q.headers['anthropic-version']).toBe('2023-06-01');
      expect(q.headers.authorization).toBeUndefined();
    }
  });

  it('answers a Vertex AI channel with the fixed list and sends its service-account key nowhere', async () => {
    const id = await addChannel(s, {
      type: 41,
      baseUrl: vertex.url,
      key: vertex.newServiceAccount(),
      other: 'us-central1',
      models: ['x'],
    });
    await channelsChanged(s);
    const before = vertex.requests.length;
    const r = await fetchModels(id);
    expect(r).toEqual({ success: true, message: '', data: [...VERTEX_MODELS] });
    expect(vertex.requests.length).toBe(before);
  });

  const postFetchModels = async (body: unknown) => {
    const r = await fetch(`${s.url}/api/channel/fetch_models`, {
      method: 'POST',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await r.json()) as { success: boolean; message: string; data?: string[] };
  };

  it('answers a Bedrock channel with the Claude models it maps, and sends its AWS secret nowhere', async () => {
    sink.reset();
    const id = await addChannel(s, { type: 33, baseUrl: sink.url, key: BEDROCK_KEY, models: ['x'] });
    await channelsChanged(s);
    const stored = await fetchModels(id);
    expect(stored).toEqual({ success: true, message: '', data: [...BEDROCK_MODELS] });
    expect(stored.data).toContain('claude-3-5-sonnet-20241022');
    // the form's list, before the channel is saved
    const typed = await postFetchModels({ type: 33, base_url: sink.url, key: BEDROCK_KEY });
    expect(typed).toEqual({ success: true, message: '', data: [...BEDROCK_MODELS] });
    expect(sink.requests).toEqual([]);
  });

  it('answers the form of a Vertex AI channel with the fixed list, sending its service-account JSON nowhere', async () => {
    sink.reset();
    const typed = await postFetchModels({ type: 41, base_url: sink.url, key: vertex.newServiceAccount() });
    expect(typed).toEqual({ success: true, message: '', data: [...VERTEX_MODELS] });
    expect(sink.requests).toEqual([]);
  });

  async function testChannel(id: number, model: string) {
    const r = await fetch(`${s.url}/api/channel/test/${id}?model=${encodeURIComponent(model)}`, {
      headers: adminHeaders,
    });
    return (await r.json()) as { success: boolean; message: string; time: number };
  }

  it('tests a Bedrock channel with a SigV4-signed Claude request; the secret never travels, a wrong one fails', async () => {
    const model = 'claude-3-haiku-20240307';
    await setOptions(s, { ModelRatio: { [model]: 1 } });
    const id = await addChannel(s, { type: 33, baseUrl: bedrock.url, key: BEDROCK_KEY, models: [model] });
    const wrong = await addChannel(s, {
      type: 33,
      baseUrl: bedrock.url,
      key: 'AKIDPROBE|not-the-secret|us-east-1',
      models: [model],
    });
    await channelsChanged(s);
    const before = bedrock.requests.length;
    const r = await testChannel(id, model);
    expect(r).toMatchObject({ success: true, message: '' });
    const sent = bedrock.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0].modelId).toBe('us.anthropic.claude-3-haiku-20240307-v1:0');
    expect(sent[0].body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 10 });
    expect(String(sent[0].headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDPROBE\//);

    const refused = await testChannel(wrong, model);
    expect(refused.success).toBe(false);
    expect(refused.message).toMatch(/signature we calculated does not match/);
    for (const req of bedrock.requests)
      expect(wireText({ ...req, raw: req.raw.toString('utf8') })).not.toContain('-secret');
  });

  it('tests a Vertex AI channel, Gemini and Claude models, with an OAuth token; the key file never travels', async () => {
    await setOptions(s, { ModelRatio: { 'gemini-2.5-pro': 1, 'claude-sonnet-4-20250514': 1 } });
    const key = vertex.newServiceAccount();
    const id = await addChannel(s, {
      type: 41,
      baseUrl: vertex.url,
      key,
      other: 'us-central1',
      models: ['gemini-2.5-pro', 'claude-sonnet-4-20250514'],
    });
    await channelsChanged(s);
    const before = vertex.requests.length;
    expect(await testChannel(id, 'gemini-2.5-pro')).toMatchObject({ success: true, message: '' });
    expect(await testChannel(id, 'claude-sonnet-4-20250514')).toMatchObject({ success: true, message: '' });
    const calls = vertex.requests.slice(before).filter((r) => r.publisher);
    expect(calls.map((r) => `${r.publisher}/${r.model}:${r.action}`)).toEqual([
      'google/gemini-2.5-pro:generateContent',
      'anthropic/claude-sonnet-4@20250514:rawPredict',
    ]);
    for (const c of calls) expect(String(c.headers.authorization)).toMatch(/^Bearer ya29\./);
    const privateKey = JSON.parse(key).private_key.split('\n')[1];
    for (const req of vertex.requests) expect(wireText(req)).not.toContain(privateKey);

    vertex.revokeAll();
    const refused = await testChannel(id, 'gemini-2.5-pro');
    expect(refused.success).toBe(false);
    expect(refused.message).toMatch(/invalid authentication credentials/);
  });
});
