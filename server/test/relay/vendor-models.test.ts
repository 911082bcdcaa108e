// The console's "fetch models" for the vendors whose list is not OpenAI's: Gemini's native list (paged, only models
// that generate content or embed, names without `models/`), Anthropic's (paged with after_id) and Vertex AI's fixed
// list, which sends its service-account key nowhere.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { DEFAULT_GEMINI_MODELS, GEMINI_MOCK_KEY, MockGemini } from '../helpers/mock-gemini.js';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../helpers/mock-anthropic.js';
import { MockVertex } from '../helpers/mock-vertex.js';
import { addChannel, addUser, channelsChanged } from './fixtures.js';
import { VERTEX_MODELS } from '../../src/relay/upstream-models.js';

describe('fetch_models for Gemini, Anthropic and Vertex AI channels', () => {
  let s: TestServer;
  let gemini: MockGemini;
  let anthropic: MockAnthropic;
  let vertex: MockVertex;
  let adminHeaders: Record<string, string>;

  beforeAll(async () => {
    [gemini, anthropic, vertex] = await Promise.all([MockGemini.start(), MockAnthropic.start(), MockVertex.start()]);
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
    await Promise.all([gemini?.close(), anthropic?.close(), vertex?.close()]);
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
});
