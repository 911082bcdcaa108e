// Jina AI (type 38) through the gateway: embeddings (the official openai client, and @google/genai's embedContent) and
// rerank go to Jina's /v1 paths with the Bearer key, charged Jina's usage; a chat request is not declared by the
// provider, so it is refused before anything is sent and nothing is charged; Jina's FastAPI error ({detail}) reaches
// the client with nothing charged.
import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client, relayPost } from '../relay/fixtures.js';
import { MockCompatibleVendor, recordedCase } from '../helpers/mock-compatible-vendor.js';
import { relayServices } from '../../src/relay/services.js';
import { testChannel } from '../../src/relay/channel-probe.js';
import {
  expectCharged,
  expectNothingCharged,
  geminiClient,
  snapshot,
  sqliteOnly,
  vendorSuite,
} from './vendor-gateway.js';

const KEY = 'jina_3f9c2a7e1b8d4c6a9e0f1a2b3c4d5e6fXk2mQ9';
const MODEL = 'jina-embeddings-v3';
const RERANKER = 'jina-reranker-v2-base-multilingual';
const recorded = recordedCase('jina');
const RERANK = {
  model: RERANKER,
  usage: { total_tokens: 23 },
  results: [
    { index: 1, document: { text: 'Paris is the capital of France.' }, relevance_score: 0.88 },
    { index: 0, document: { text: 'Berlin is in Germany.' }, relevance_score: 0.04 },
  ],
};

await describeEachDb('Jina channels', (kind) => {
  const models = [MODEL, RERANKER, 'fail-model'];
  const suite = vendorSuite({
    kind,
    mock: () =>
      MockCompatibleVendor.start({
        provider: 'jina',
        routes: { '/v1/embeddings': { kind: 'recorded-json' }, '/v1/rerank': { kind: 'json', answer: RERANK } },
        headers: { authorization: `Bearer ${KEY}` },
      }),
    channel: { type: 38, key: KEY, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  it('relays embeddings to /v1/embeddings, charged Jina’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).embeddings.create({
      model: MODEL,
      input: 'hello',
      encoding_format: 'float',
    });
    expect(r.data[0].embedding).toEqual([0.0123, -0.0456, 0.0789, -0.0112]);
    expect(suite.mock.requests.at(-1)!.path).toBe('/v1/embeddings');
    await expectCharged(suite, before, { prompt: recorded.answer.usage.prompt_tokens, completion: 0 }, MODEL);
  });

  onSqlite('embeds for a Gemini client’s embedContent, charged the same', async () => {
    const before = await snapshot(suite);
    const r = await geminiClient(suite).models.embedContent({ model: MODEL, contents: 'hello' });
    expect(r.embeddings?.map((e) => e.values)).toEqual([[0.0123, -0.0456, 0.0789, -0.0112]]);
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.body).toEqual({ model: MODEL, input: ['hello'] });
    expect(sent.path).toBe('/v1/embeddings');
    await expectCharged(suite, before, { prompt: recorded.answer.usage.prompt_tokens, completion: 0 }, MODEL);
  });

  onSqlite('relays rerank to /v1/rerank, charged its total tokens', async () => {
    const before = await snapshot(suite);
    const r = await relayPost(suite.s, '/v1/rerank', suite.key, {
      model: RERANKER,
      query: 'capital of France',
      documents: ['Berlin is in Germany.', 'Paris is the capital of France.'],
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { results: { index: number }[] }).results.map((x) => x.index)).toEqual([1, 0]);
    expect(suite.mock.requests.at(-1)!.path).toBe('/v1/rerank');
    await expectCharged(suite, before, { prompt: 23, completion: 0 }, RERANKER);
  });

  onSqlite('refuses chat locally: nothing sent upstream, nothing charged', async () => {
    const before = await snapshot(suite);
    const sent = suite.mock.requests.length + suite.mock.refused.length;
    const err = await client(suite.s, suite.key)
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toMatch(/的类型不支持 chat 请求/);
    expect(suite.mock.requests.length + suite.mock.refused.length).toBe(sent);
    await expectNothingCharged(suite, before);
  });

  it('gives the client Jina’s error and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(suite.s, suite.key)
      .embeddings.create({ model: 'fail-model', input: 'hello' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).message).toContain('Failed to authenticate with the provided api key.');
    await expectNothingCharged(suite, before);
  });
});

describe('testing a Jina channel', () => {
  const suite = vendorSuite({
    kind: 'sqlite',
    mock: () =>
      MockCompatibleVendor.start({
        provider: 'jina',
        routes: { '/v1/embeddings': { kind: 'recorded-json' } },
        headers: { authorization: `Bearer ${KEY}` },
      }),
    // a reranker first: its name says nothing of embeddings, and chat is not Jina's
    channel: { type: 38, key: KEY, models: [RERANKER, MODEL] },
    models: [RERANKER, MODEL],
  });

  it('sends the probe to its embeddings endpoint, never to a chat path', async () => {
    const svc = relayServices(suite.s.ctx);
    const ch = svc.channels.all().find((c) => c.type === 38)!;
    const r = await testChannel(suite.s.ctx, svc, ch);
    expect(r).toMatchObject({ ok: true });
    expect(suite.mock.requests.map((q) => q.path)).toEqual(['/v1/embeddings']);
    expect(suite.mock.refused).toEqual([]);
  });
});
