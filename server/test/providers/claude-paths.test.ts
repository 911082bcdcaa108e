// A Claude client's `/v1/messages` on an Ali (type 17) or MiniMax (type 35) channel goes as it is to the vendor's own
// Anthropic-compatible endpoint (DashScope's `/apps/anthropic/v1/messages`, MiniMax's `/anthropic/v1/messages`) with
// the key as a Bearer token and the client's anthropic-version, through the gateway with the official
// @anthropic-ai/sdk against a strict mock of that endpoint (helpers/mock-vendor-anthropic.ts): the vendor's recorded
// answer and stream reach the client, charged the vendor's usage to the unit; the vendor's error reaches the client in
// Anthropic's shape with nothing charged; an OpenAI client on the same channel keeps the vendor's OpenAI API.
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { startVendorAnthropic } from '../helpers/mock-vendor-anthropic.js';
import { client } from '../relay/fixtures.js';
import { expectCharged, expectNothingCharged, snapshot, vendorSuite } from './vendor-gateway.js';

interface Vendor {
  name: string;
  provider: string;
  type: number;
  path: string;
  model: string;
  /** the recorded answer's and stream's usage */
  usage: { prompt: number; completion: number };
  /** what the recorded answer says */
  content: Record<string, unknown>[];
}

const VENDORS: Vendor[] = [
  {
    name: 'Ali DashScope',
    provider: 'ali',
    type: 17,
    path: '/apps/anthropic/v1/messages',
    model: 'qwen3-coder-plus',
    usage: { prompt: 15, completion: 6 },
    content: [{ type: 'text', text: '法国的首都是巴黎。' }],
  },
  {
    name: 'MiniMax',
    provider: 'minimax',
    type: 35,
    path: '/anthropic/v1/messages',
    model: 'MiniMax-M2',
    usage: { prompt: 42, completion: 19 },
    content: [
      expect.objectContaining({ type: 'thinking', thinking: 'The user asks for the capital of France.' }),
      { type: 'text', text: '法国的首都是巴黎。' },
    ],
  },
];

const KEY = 'sk-vendor-5f2a9c1e7b3d4a6f8e0c2b4d';
const ask = [{ role: 'user' as const, content: '法国的首都是哪里？' }];

describe.each(VENDORS)('$name: Claude clients on its Anthropic endpoint', (v) => {
  const models = [v.model, 'fail-model'];
  const suite = vendorSuite({
    kind: 'sqlite',
    mock: () => startVendorAnthropic(v.provider, v.path, KEY),
    channel: { type: v.type, key: KEY, models },
    models,
  });
  const claude = () => new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });

  it('the mock refuses what the endpoint refuses: x-api-key alone, no anthropic-version, an OpenAI body', async () => {
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(`${suite.mock.url}${v.path}`, { method: 'POST', headers, body: JSON.stringify(body) }).then(
        (r) => r.status,
      );
    const claudeBody = { model: v.model, max_tokens: 64, messages: ask };
    expect(await post({ 'x-api-key': KEY, 'anthropic-version': '2023-06-01' }, claudeBody)).toBe(401);
    expect(await post({ authorization: `Bearer ${KEY}` }, claudeBody)).toBe(400);
    const bearer = { authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01' };
    expect(await post(bearer, { model: v.model, messages: ask, stream_options: {} })).toBe(400);
    expect(await post(bearer, claudeBody)).toBe(200);
  });

  it('sends a Claude client’s messages as they are, charged the vendor’s usage', async () => {
    const before = await snapshot(suite);
    const r = await claude().messages.create({
      model: v.model,
      max_tokens: 64,
      system: '简短回答。',
      messages: ask,
    });
    expect(r.content).toEqual(v.content);
    expect(r.usage).toMatchObject({ input_tokens: v.usage.prompt, output_tokens: v.usage.completion });
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe(v.path);
    expect(sent.body).toEqual({ model: v.model, max_tokens: 64, system: '简短回答。', messages: ask });
    expect(sent.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01' });
    await expectCharged(suite, before, v.usage, v.model);
  });

  it('streams the vendor’s events to a Claude client, charged the message_delta’s usage', async () => {
    const before = await snapshot(suite);
    const stream = claude().messages.stream({ model: v.model, max_tokens: 64, messages: ask });
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    expect(text).toBe('法国的首都是巴黎。');
    expect(final.stop_reason).toBe('end_turn');
    expect(suite.mock.requests.at(-1)!.body.stream).toBe(true);
    await expectCharged(suite, before, v.usage, v.model);
  });

  it('gives the client the vendor’s error in Anthropic’s shape and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await claude()
      .messages.create({ model: 'fail-model', max_tokens: 16, messages: ask })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(404);
    expect((err as Error).message).toContain('fail-model does not exist');
    await expectNothingCharged(suite, before);
  });

  it('keeps an OpenAI client on the vendor’s OpenAI API (refused by this mock: nothing reaches its Claude path)', async () => {
    const before = await snapshot(suite);
    const sent = suite.mock.requests.length;
    await client(suite.s, suite.key)
      .chat.completions.create({ model: v.model, messages: ask })
      .catch(() => null);
    expect(suite.mock.requests.at(-1)!.path).not.toBe(v.path);
    expect(suite.mock.requests.length).toBe(sent + 1);
    await expectNothingCharged(suite, before);
  });
});
