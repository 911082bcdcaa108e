// Submodel (type 53) through the gateway: chat at {base}/v1/chat/completions with the Bearer key, stream and not,
// charged its usage, a Claude client and a Gemini (@google/genai) one through the hub to the same path; its error
// reaches the client with nothing charged. A channel without a base URL goes to https://llm.submodel.ai
// (services/channel-types.ts).
import Anthropic from '@anthropic-ai/sdk';
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client } from '../relay/fixtures.js';
import { MockCompatibleVendor, recordedCase } from '../helpers/mock-compatible-vendor.js';
import { channelBaseUrl } from '../../src/services/channel-types.js';
import {
  expectCharged,
  expectNothingCharged,
  geminiChat,
  snapshot,
  sqliteOnly,
  vendorSuite,
} from './vendor-gateway.js';

const KEY = 'sm-4c8f1e2a9b7d3c6e5f0a1b2c3d4e5f60';
const MODEL = 'deepseek-ai/DeepSeek-V3-0324';
const recorded = recordedCase('submodel');
const usage = {
  prompt: recorded.stream.usage.prompt_tokens as number,
  completion: recorded.stream.usage.completion_tokens as number,
};

await describeEachDb('Submodel channels', (kind) => {
  const models = [MODEL, 'fail-model'];
  const suite = vendorSuite({
    kind,
    mock: () =>
      MockCompatibleVendor.start({
        provider: 'submodel',
        routes: { '/v1/chat/completions': { kind: 'chat' } },
        headers: { authorization: `Bearer ${KEY}` },
      }),
    channel: { type: 53, key: KEY, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite('defaults to Submodel’s own address', () => {
    expect(channelBaseUrl(53, '')).toBe('https://llm.submodel.ai');
  });

  it('relays chat to /v1/chat/completions, charged Submodel’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Capital of France?' }],
    });
    expect(r.choices[0].message.content).toBe('Paris.');
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('streams, charged the usage of the last chunk', async () => {
    const before = await snapshot(suite);
    const stream = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Capital of France?' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Paris.');
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('serves a Claude client through the hub at the same chat path', async () => {
    const before = await snapshot(suite);
    const claude = new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });
    const r = await claude.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Capital of France?' }],
    });
    expect(r.content).toEqual([{ type: 'text', text: 'Paris.' }]);
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body.messages).toEqual([{ role: 'user', content: 'Capital of France?' }]);
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('answers a Gemini client, stream and not', async () => {
    const question = {
      contents: 'Capital of France?',
      config: { systemInstruction: 'Be terse.', maxOutputTokens: 64 },
    };
    const messages = [
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'Capital of France?' },
    ];
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, MODEL, { ...question, stream: false });
    expect(plain.text).toBe('Paris.');
    expect(plain.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    const sent = suite.mock.requests.at(-1)!;
    expect([sent.path, sent.body.messages, sent.body.max_tokens]).toEqual(['/v1/chat/completions', messages, 64]);
    await expectCharged(suite, before, usage, MODEL);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { ...question, stream: true });
    expect(streamed.text).toBe('Paris.');
    expect(streamed.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    expect(suite.mock.requests.at(-1)!.body).toMatchObject({ messages, stream: true });
    await expectCharged(suite, before, usage, MODEL);
  });

  it('gives the client Submodel’s error and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(suite.s, suite.key)
      .chat.completions.create({ model: 'fail-model', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).message).toContain('does not exist');
    await expectNothingCharged(suite, before);
  });
});
