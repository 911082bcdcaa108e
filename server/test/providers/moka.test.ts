// MokaAI (type 44) through the gateway: m3e embeddings (the openai client, and @google/genai's embedContent) go to
// {base}/embeddings (no /v1) with the Bearer key, charged Moka's usage; a chat request is refused locally (Moka serves
// embeddings only) with nothing sent or charged.
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { MockCompatibleVendor } from '../helpers/mock-compatible-vendor.js';
import { describeEachDb } from '../helpers/databases.js';
import { client } from '../relay/fixtures.js';
import {
  expectCharged,
  expectNothingCharged,
  geminiClient,
  snapshot,
  sqliteOnly,
  vendorSuite,
} from './vendor-gateway.js';

const KEY = 'sk-moka-7e2f9c1a3b5d';

await describeEachDb('MokaAI channels', (kind) => {
  const models = ['m3e-base', 'fail-model'];
  const suite = vendorSuite({
    kind,
    mock: () =>
      MockCompatibleVendor.start({
        provider: 'moka',
        routes: { '/moka/embeddings': { kind: 'recorded-json' } },
        headers: { authorization: `Bearer ${KEY}` },
      }),
    channel: { type: 44, key: KEY, path: '/moka', models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  it('relays m3e embeddings to {base}/embeddings, charged Moka’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).embeddings.create({
      model: 'm3e-base',
      input: 'hello',
      encoding_format: 'float',
    });
    expect(r.data[0].embedding).toEqual([0.0214, -0.0371, 0.0058, 0.0462]);
    expect(suite.mock.requests.at(-1)!.path).toBe('/moka/embeddings');
    await expectCharged(suite, before, { prompt: 6, completion: 0 }, 'm3e-base');
  });

  onSqlite('embeds for a Gemini client’s embedContent, charged the same', async () => {
    const before = await snapshot(suite);
    const r = await geminiClient(suite).models.embedContent({ model: 'm3e-base', contents: 'hello' });
    expect(r.embeddings?.map((e) => e.values)).toEqual([[0.0214, -0.0371, 0.0058, 0.0462]]);
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.body).toEqual({ model: 'm3e-base', input: ['hello'] });
    expect(sent.path).toBe('/moka/embeddings');
    await expectCharged(suite, before, { prompt: 6, completion: 0 }, 'm3e-base');
  });

  onSqlite('refuses chat locally with nothing sent or charged', async () => {
    const before = await snapshot(suite);
    const sent = suite.mock.requests.length + suite.mock.refused.length;
    const err = await client(suite.s, suite.key)
      .chat.completions.create({ model: 'm3e-base', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect(suite.mock.requests.length + suite.mock.refused.length).toBe(sent);
    await expectNothingCharged(suite, before);
  });

  it('gives the client Moka’s error and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(suite.s, suite.key)
      .embeddings.create({ model: 'fail-model', input: 'hello' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).message).toContain('Invalid API key');
    await expectNothingCharged(suite, before);
  });
});
