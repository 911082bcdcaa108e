// The channel output settings (force_format, thinking_to_content) on the lanes that read answers through the hub:
// a translated lane (an OpenAI client on a Claude channel) and the native decoded lane (a Claude client on a Claude
// channel), streamed and whole. On the OpenAI native lane they are covered by channel-setting.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, client, setOptions } from './fixtures.js';

const CLAUDE_TYPE = 14;

const sse = (events: Record<string, any>[]) =>
  events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');

/** A Claude stream that thinks, then answers. */
const thinkingStream = sse([
  {
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'let me' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: ' think' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-1' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Answer' } },
  { type: 'content_block_stop', index: 1 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } },
  { type: 'message_stop' },
]);

/** A whole Claude answer that thinks, then answers citing a web page. */
const thinkingAnswer = {
  id: 'msg_2',
  type: 'message',
  role: 'assistant',
  model: 'claude-x',
  content: [
    { type: 'thinking', thinking: 'let me think', signature: 'sig-2' },
    {
      type: 'text',
      text: 'Paris',
      citations: [
        { type: 'web_search_result_location', url: 'https://example.com/paris', title: 'Paris', cited_text: 'Paris' },
      ],
    },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 7 },
};

describe('channel output settings on the hub lanes', () => {
  let s: TestServer;
  let up: MockUpstream;
  let key: string;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    await setOptions(s, { ModelRatio: { 'claude-think': 1, 'claude-strict': 1, 'claude-plain': 1 } });
    const claude = { type: CLAUDE_TYPE, baseUrl: up.url };
    await addChannel(s, { ...claude, models: ['claude-think'], setting: { thinking_to_content: true } });
    await addChannel(s, { ...claude, models: ['claude-strict'], setting: { force_format: true } });
    await addChannel(s, { ...claude, models: ['claude-plain'] });
    await channelsChanged(s);
    const u = await addUser(s);
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  const streamed = () => {
    up.behave = () => ({ kind: 'raw', status: 200, contentType: 'text/event-stream', body: thinkingStream });
  };
  const whole = () => {
    up.behave = () => ({
      kind: 'raw',
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify(thinkingAnswer),
    });
  };

  /** A Claude client's call, as its SDK sends it: the answer's JSON, or the stream's events. */
  async function claudeCall(model: string, stream: boolean): Promise<any> {
    const r = await fetch(`${s.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': key.startsWith('sk-') ? key : `sk-${key}`,
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({ model, max_tokens: 100, stream, messages: [{ role: 'user', content: 'q' }] }),
    });
    expect(r.status).toBe(200);
    if (!stream) return r.json();
    const text = await r.text();
    return text
      .split('\n\n')
      .map((e) => e.split('\n').find((l) => l.startsWith('data: ')))
      .filter((l): l is string => !!l)
      .map((l) => JSON.parse(l.slice(6)));
  }

  describe('translated lane (OpenAI client, Claude channel)', () => {
    it('thinking_to_content: a stream gives the reasoning as <think> content', async () => {
      streamed();
      const stream = await client(s, key).chat.completions.create({
        model: 'claude-think',
        messages: [{ role: 'user', content: 'q' }],
        stream: true,
      });
      let text = '';
      let reasoning = '';
      for await (const c of stream) {
        text += c.choices[0]?.delta?.content ?? '';
        reasoning += (c.choices[0]?.delta as any)?.reasoning_content ?? '';
      }
      expect(text).toBe('<think>\nlet me think\n</think>\nAnswer');
      expect(reasoning).toBe('');
    });

    it('thinking_to_content: a whole answer gives the reasoning as <think> content', async () => {
      whole();
      const r = await client(s, key).chat.completions.create({
        model: 'claude-think',
        messages: [{ role: 'user', content: 'q' }],
      });
      const m = r.choices[0].message as any;
      expect(m.content).toBe('<think>\nlet me think\n</think>\nParis');
      expect(m.reasoning_content).toBeUndefined();
    });

    it('force_format: a whole answer keeps only OpenAI chat fields (no cited sources)', async () => {
      whole();
      const plain = (await client(s, key).chat.completions.create({
        model: 'claude-plain',
        messages: [{ role: 'user', content: 'q' }],
      })) as any;
      // without the setting the cited page comes as OpenAI's url_citation annotation
      expect(plain.choices[0].message.annotations).toHaveLength(1);
      const strict = (await client(s, key).chat.completions.create({
        model: 'claude-strict',
        messages: [{ role: 'user', content: 'q' }],
      })) as any;
      expect(strict.choices[0].message.content).toBe('Paris');
      expect(strict.choices[0].message.reasoning_content).toBe('let me think');
      expect(strict.choices[0].message.annotations).toBeUndefined();
      expect(strict.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 7 });
    });
  });

  describe('native decoded lane (Claude client, Claude channel)', () => {
    it('thinking_to_content: a stream gives the reasoning as text, with no thinking block', async () => {
      streamed();
      const events: any[] = await claudeCall('claude-think', true);
      const blocks = events.filter((e) => e.type === 'content_block_start').map((e) => e.content_block.type);
      expect(blocks).toEqual(['text']);
      const text = events
        .filter((e) => e.type === 'content_block_delta')
        .map((e) => e.delta.text ?? '')
        .join('');
      expect(text).toBe('<think>\nlet me think\n</think>\nAnswer');
      expect(events.some((e) => e.delta?.type === 'signature_delta')).toBe(false);
      expect(events.at(-1).type).toBe('message_stop');
    });

    it('thinking_to_content: a whole answer gives the reasoning as text', async () => {
      whole();
      const answer = await claudeCall('claude-think', false);
      // the reasoning, then the cited answer: text blocks only, the citation still on the word it cites
      expect(answer.content.map((b: any) => b.type)).toEqual(['text', 'text']);
      expect(answer.content.map((b: any) => b.text).join('')).toBe('<think>\nlet me think\n</think>\nParis');
      expect(answer.content[1]).toMatchObject({ text: 'Paris', citations: [{ url: 'https://example.com/paris' }] });
      expect(answer.usage).toMatchObject({ input_tokens: 10, output_tokens: 7 });
    });

    it('force_format: a whole answer loses the hub extensions (signed thinking, citations)', async () => {
      whole();
      const plain = await claudeCall('claude-plain', false);
      expect(plain.content.find((b: any) => b.type === 'text').citations).toHaveLength(1);
      const strict = await claudeCall('claude-strict', false);
      expect(strict.content.find((b: any) => b.type === 'text').citations).toBeUndefined();
    });

    it('without a setting, the stream passes as it came', async () => {
      streamed();
      const events: any[] = await claudeCall('claude-plain', true);
      const blocks = events.filter((e) => e.type === 'content_block_start').map((e) => e.content_block.type);
      expect(blocks).toEqual(['thinking', 'text']);
      expect(events.some((e) => e.delta?.type === 'signature_delta')).toBe(true);
    });
  });
});
