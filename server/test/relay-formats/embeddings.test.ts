// Embeddings across formats with the official clients: the openai client's /v1/embeddings on a Gemini channel
// (Gemini's :batchEmbedContents, answered as OpenAI embeddings, float or base64, with the relay's input count as
// usage) and @google/genai's embedContent (:batchEmbedContents) and a plain :embedContent on an OpenAI channel
// (/v1/embeddings, answered in Gemini's shape, billed by the upstream's usage). Each is billed on its input only.
import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { defaultBehaviour, MockUpstream } from '../helpers/mock-upstream.js';
import { GEMINI_MOCK_KEY, MockGemini } from '../helpers/mock-gemini.js';
import { embeddingFor } from '../helpers/mock-gemini-answer.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  flushLogs,
  logsOf,
  relayPost,
  setOptions,
  userRow,
} from '../relay/fixtures.js';

const GEMINI_EMBED = 'gemini-embedding-001';
const OPENAI_EMBED = 'text-embedding-3-small';

describe('embeddings across formats', () => {
  let s: TestServer;
  let openai: MockUpstream;
  let gemini: MockGemini;
  let key: string;
  let userId: number;

  beforeAll(async () => {
    [openai, gemini] = await Promise.all([MockUpstream.start(), MockGemini.start()]);
    // one vector per input, as OpenAI answers, with its usage
    openai.behave = (req) => {
      if (!req.path.endsWith('/embeddings')) return defaultBehaviour(req);
      const input: unknown = req.body.input;
      const texts = Array.isArray(input) ? input : [input];
      return {
        kind: 'json',
        body: {
          object: 'list',
          data: texts.map((t, index) => ({ object: 'embedding', index, embedding: embeddingFor(String(t), 4) })),
          model: req.body.model,
          usage: { prompt_tokens: 11, total_tokens: 11 },
        },
      };
    };
    s = await startTestServer();
    await setOptions(s, { ModelRatio: { [GEMINI_EMBED]: 0.5, [OPENAI_EMBED]: 0.25 } });
    await addChannel(s, { type: 24, baseUrl: gemini.url, key: GEMINI_MOCK_KEY, models: [GEMINI_EMBED] });
    await addChannel(s, { type: 1, baseUrl: openai.url, models: [OPENAI_EMBED] });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 100_000_000 });
    userId = u.id;
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([openai?.close(), gemini?.close()]);
  });

  async function balance() {
    await flushLogs(s);
    return (await userRow(s, userId)).quota;
  }

  /** The last log row is an input-only charge of `model`, and the balance moved by exactly its quota. */
  async function expectInputBilled(model: string, before: number, promptTokens?: number) {
    const row = (await logsOf(s, userId)).at(-1)!;
    expect(row.model_name).toBe(model);
    expect(row.completion_tokens).toBe(0);
    if (promptTokens !== undefined) expect(row.prompt_tokens).toBe(promptTokens);
    else expect(row.prompt_tokens).toBeGreaterThan(0);
    const o = row.otherJson;
    expect(Math.abs(row.quota - row.prompt_tokens * o.model_ratio * o.group_ratio)).toBeLessThanOrEqual(1);
    expect(before - (await userRow(s, userId)).quota).toBe(row.quota);
    return row;
  }

  it('OpenAI client on a Gemini channel: :batchEmbedContents, base64 vectors decoded by the SDK, local input count', async () => {
    const c = client(s, key);
    const before = await balance();
    const inputs = ['hello world', 'a second text'];
    const r = await c.embeddings.create({ model: GEMINI_EMBED, input: inputs, dimensions: 8 });
    const sent = gemini.requests.at(-1)!;
    expect(sent.path).toBe(`/v1beta/models/${GEMINI_EMBED}:batchEmbedContents`);
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI_MOCK_KEY);
    expect(sent.body).toEqual({
      requests: inputs.map((text) => ({
        model: `models/${GEMINI_EMBED}`,
        content: { parts: [{ text }] },
        outputDimensionality: 8,
      })),
    });
    expect(r.object).toBe('list');
    expect(r.model).toBe(GEMINI_EMBED);
    expect(r.data.map((d) => d.index)).toEqual([0, 1]);
    inputs.forEach((text, i) => {
      const want = embeddingFor(text, 8);
      expect(r.data[i].embedding).toHaveLength(8);
      r.data[i].embedding.forEach((v, k) => expect(v).toBeCloseTo(want[k], 5));
    });
    await flushLogs(s);
    const row = await expectInputBilled(GEMINI_EMBED, before);
    expect(r.usage).toEqual({ prompt_tokens: row.prompt_tokens, total_tokens: row.prompt_tokens });
  });

  it('OpenAI client on a Gemini channel asking for floats gets the values as Gemini gave them', async () => {
    const r = await client(s, key).embeddings.create({
      model: GEMINI_EMBED,
      input: 'just one',
      encoding_format: 'float',
    });
    expect(r.data).toHaveLength(1);
    const values = r.data[0].embedding;
    expect(values.length).toBeGreaterThan(0);
    expect(values).toEqual(embeddingFor('just one', values.length));
  });

  it('refuses token-array input Gemini cannot embed with a 400 in OpenAI shape, sending nothing upstream', async () => {
    const before = gemini.requests.length;
    const r = await relayPost(s, '/v1/embeddings', key, { model: GEMINI_EMBED, input: [[1, 2, 3]] });
    expect(r.status).toBe(400);
    const body = (await r.json()) as any;
    expect(body.error.message).toMatch(/input must be a string/);
    expect(body.error.type).toBe('invalid_request_error');
    expect(gemini.requests.length).toBe(before);
  });

  it('Gemini client on an OpenAI channel: genai embedContent → /v1/embeddings, answered in Gemini shape, upstream usage', async () => {
    const google = new GoogleGenAI({ apiKey: `sk-${key}`, httpOptions: { baseUrl: s.url } });
    const before = await balance();
    const r = await google.models.embedContent({
      model: OPENAI_EMBED,
      contents: ['first text', 'second text'],
      config: { outputDimensionality: 4 },
    });
    const sent = openai.requests.at(-1)!;
    expect(sent.path).toBe('/v1/embeddings');
    expect(sent.body).toEqual({ model: OPENAI_EMBED, input: ['first text', 'second text'], dimensions: 4 });
    expect(r.embeddings?.map((e) => e.values)).toEqual([embeddingFor('first text', 4), embeddingFor('second text', 4)]);
    await flushLogs(s);
    await expectInputBilled(OPENAI_EMBED, before, 11);
  });

  it('Gemini client on an OpenAI channel: a plain :embedContent answers one embedding', async () => {
    const before = await balance();
    const r = await relayPost(s, `/v1beta/models/${OPENAI_EMBED}:embedContent`, key, {
      content: { parts: [{ text: 'only' }, { text: 'one' }] },
    });
    expect(r.status).toBe(200);
    expect(openai.requests.at(-1)!.body).toEqual({ model: OPENAI_EMBED, input: 'only\none' });
    expect(await r.json()).toEqual({ embedding: { values: embeddingFor('only\none', 4) } });
    await flushLogs(s);
    await expectInputBilled(OPENAI_EMBED, before, 11);
  });
});
