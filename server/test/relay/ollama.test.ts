// Ollama channels (type 4, new-api-compat.md §7): chat through its OpenAI-compatible /v1 API, embeddings through the
// native POST /api/embed, converted both ways (float and base64 encodings for the official client), billed on
// prompt_eval_count, with the model mapping applied and Ollama's {error: "…"} errors passed on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  flushLogs,
  logsOf,
  setOptions,
  waitFor,
  relayPost,
} from './fixtures.js';

const VECTORS = [
  [0.5, -0.25, 0.125],
  [1, 2, 3.5],
];

describe('Ollama channels', () => {
  let s: TestServer;
  let up: MockUpstream;
  let key: string;
  let userId: number;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    await setOptions(s, { ModelRatio: { 'nomic-embed': 0.5, 'llama-chat': 1 } });
    await addChannel(s, {
      type: 4,
      baseUrl: up.url,
      models: ['nomic-embed', 'llama-chat'],
      modelMapping: { 'nomic-embed': 'nomic-embed-text:latest' },
    });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 10_000_000 });
    userId = u.id;
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  const ollamaEmbed =
    (status = 200) =>
    () =>
      status === 200
        ? ({
            kind: 'json',
            body: {
              model: 'nomic-embed-text:latest',
              embeddings: VECTORS,
              total_duration: 1,
              load_duration: 1,
              prompt_eval_count: 12,
            },
          } as const)
        : ({
            kind: 'json',
            status,
            body: { error: 'model "nomic-embed-text:latest" not found, try pulling it first' },
          } as const);

  it('sends embeddings to /api/embed in Ollama format and answers in OpenAI format (float)', async () => {
    up.reset();
    up.behave = ollamaEmbed();
    const res = await client(s, key).embeddings.create({
      model: 'nomic-embed',
      input: ['a', 'b'],
      encoding_format: 'float',
      dimensions: 3,
    });
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0].path).toBe('/api/embed');
    expect(up.requests[0].body).toEqual({
      model: 'nomic-embed-text:latest',
      input: ['a', 'b'],
      truncate: true,
      dimensions: 3,
    });
    expect(res.object).toBe('list');
    expect(res.data.map((d) => [d.index, d.embedding])).toEqual([
      [0, VECTORS[0]],
      [1, VECTORS[1]],
    ]);
    expect(res.usage).toEqual({ prompt_tokens: 12, total_tokens: 12 });
    await waitFor(async () => (await logsOf(s, userId)).length === 1);
    const [l] = await logsOf(s, userId);
    // 12 prompt tokens × model ratio 0.5 = 6
    expect([l.prompt_tokens, l.quota, l.model_name]).toEqual([12, 6, 'nomic-embed']);
  });

  it('returns base64 float32 vectors when the client asks for them (the SDK default) and the SDK decodes them', async () => {
    up.reset();
    up.behave = ollamaEmbed();
    const raw = await relayPost(s, '/v1/embeddings', key, {
      model: 'nomic-embed',
      input: 'a',
      encoding_format: 'base64',
    });
    const j = (await raw.json()) as { data: Array<{ embedding: string }> };
    expect(typeof j.data[0].embedding).toBe('string');
    const bytes = Buffer.from(j.data[0].embedding, 'base64');
    expect(Array.from(new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)))).toEqual(
      VECTORS[0],
    );
    // the official client, without encoding_format, asks for base64 and decodes it
    const res = await client(s, key).embeddings.create({ model: 'nomic-embed', input: 'a' });
    expect(res.data[1].embedding).toEqual(VECTORS[1]);
    expect(up.requests.every((r) => r.path === '/api/embed' && r.body.encoding_format === undefined)).toBe(true);
  });

  it("passes Ollama's error on and refunds", async () => {
    up.reset();
    up.behave = ollamaEmbed(404);
    await flushLogs(s); // the earlier tests' settlements are written before the balance is read
    const before = (
      await s.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow()
    ).quota;
    const r = await relayPost(s, '/v1/embeddings', key, { model: 'nomic-embed', input: 'a' });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain(
      'not found, try pulling it first',
    );
    await flushLogs(s);
    const after = (
      await s.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow()
    ).quota;
    expect(after).toBe(before);
  });

  it('keeps chat on the OpenAI-compatible /v1/chat/completions', async () => {
    up.reset();
    const res = await client(s, key).chat.completions.create({
      model: 'llama-chat',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.choices[0].message.content).toBe('Hello world!');
    expect(up.requests[0].path).toBe('/v1/chat/completions');
  });
});
