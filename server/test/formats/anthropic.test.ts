import { describe, expect, it } from 'vitest';
import { FormatError } from '../../src/relay/formats/codec.js';
import {
  anthropicCodec,
  anthropicServerTools,
  ClaudeStreamError,
  countTokensRequestToHub,
  countTokensResponse,
} from '../../src/relay/formats/anthropic/index.js';
import type { HubChunk, HubRequest, HubResponse } from '../../src/relay/hub/types.js';
import { openaiCodec } from '../../src/relay/formats/openai/index.js';
import { SseParser } from '../../src/relay/stream/sse-parser.js';
import { collect, decodeSse, fixture, replayStream } from './conformance.js';

const DIR = '../../src/relay/formats/anthropic/__fixtures__';
const json = (name: string) => JSON.parse(fixture(DIR, name));
const codec = anthropicCodec;
const opts = { id: 'req123', model: 'claude-sonnet-4-20250514' };

function chunk(delta: HubChunk['choices'][number]['delta'], extra: Partial<HubChunk> = {}): HubChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: null }],
    ...extra,
  };
}

function events(sse: string): { event?: string; data: any }[] {
  return new SseParser().push(sse).map((e) => ({ event: e.event, data: JSON.parse(e.data) }));
}

function expectFormatError(fn: () => unknown, message: string | RegExp): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(FormatError);
    expect((e as FormatError).status).toBe(400);
    if (typeof message === 'string') expect((e as Error).message).toBe(message);
    else expect((e as Error).message).toMatch(message);
    return;
  }
  throw new Error('expected a FormatError');
}

describe('anthropic fixtures', () => {
  it('every fixture parses', () => {
    for (const name of [
      'message-text.json',
      'message-tools.json',
      'message-thinking.json',
      'message-cache.json',
      'error-invalid-request.json',
      'error-overloaded.json',
      'request-full.json',
    ])
      expect(() => json(name), name).not.toThrow();
    for (const name of ['stream-text.sse', 'stream-tools.sse', 'stream-thinking.sse'])
      expect(replayStream(codec, fixture(DIR, name), opts).chunks.length, name).toBeGreaterThan(0);
  });
});

describe('responseToHub', () => {
  it('reads a text answer', () => {
    const hub = codec.responseToHub(json('message-text.json'), 'x');
    expect(hub.id).toBe('msg_013Zva2CMHLNnXjNJJKqJ2EF');
    expect(hub.model).toBe('claude-sonnet-4-20250514');
    expect(hub.choices[0].message.content).toBe('Hi! My name is Claude. How can I help you today?');
    expect(hub.choices[0].finish_reason).toBe('stop');
    expect(hub.native_finish_reason).toBe('end_turn');
    expect(hub.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 16, total_tokens: 26 });
  });

  it('reads tool calls', () => {
    const hub = codec.responseToHub(json('message-tools.json'), 'x');
    const msg = hub.choices[0].message;
    expect(hub.choices[0].finish_reason).toBe('tool_calls');
    expect(msg.content).toBe("I'll check the current weather in San Francisco for you.");
    expect(msg.tool_calls).toEqual([
      {
        id: 'toolu_01A09q90qw90lq917835lq9',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
      },
    ]);
  });

  it('reads thinking with its signature', () => {
    const msg = codec.responseToHub(json('message-thinking.json'), 'x').choices[0].message;
    expect(msg.content).toBe('27 × 453 = 12,231');
    expect(msg.reasoning_content).toMatch(/^The user asks/);
    expect(msg.thinking_blocks?.[0].signature).toMatch(/^EqQBCgIYAhIM/);
  });

  it('reads cache usage the way pricing bills it, and the stop sequence', () => {
    const hub = codec.responseToHub(json('message-cache.json'), 'x');
    expect(hub.usage).toEqual({
      prompt_tokens: 21 + 2048,
      completion_tokens: 393,
      total_tokens: 21 + 2048 + 393,
      prompt_tokens_details: { cached_tokens: 2048, cache_creation_tokens: 188086 },
    });
    expect(hub.choices[0].finish_reason).toBe('stop');
    expect(hub.native_finish_reason).toBe('stop_sequence');
    expect(hub.stop_sequence).toBe('\n\nHuman:');
  });

  it('maps every stop reason', () => {
    const reasons: Record<string, string | null> = {
      end_turn: 'stop',
      stop_sequence: 'stop',
      pause_turn: 'stop',
      max_tokens: 'length',
      tool_use: 'tool_calls',
      refusal: 'content_filter',
    };
    for (const [stop_reason, finish] of Object.entries(reasons))
      expect(codec.responseToHub({ ...json('message-text.json'), stop_reason }, 'x').choices[0].finish_reason).toBe(
        finish,
      );
  });
});

describe('streamToHub', () => {
  it('decodes a text stream (with pings) split anywhere', () => {
    const { chunks, decoder } = replayStream(codec, fixture(DIR, 'stream-text.sse'), opts);
    const c = collect(chunks);
    expect(c.text).toBe('Hello! Ça va? 你好 👋');
    expect(c.finish).toBe('stop');
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.every((ch) => ch.id === 'msg_01XFDUDYJgAACzvnptvVoYEL' && ch.model === opts.model)).toBe(true);
    expect(decoder.usage()).toMatchObject({ prompt_tokens: 25, completion_tokens: 15, total_tokens: 40 });
    expect(chunks.at(-1)?.native_finish_reason).toBe('end_turn');
  });

  it('decodes tool calls from input_json_delta pieces, numbering them among tool_use blocks only', () => {
    const { chunks, decoder } = replayStream(codec, fixture(DIR, 'stream-tools.sse'), opts);
    const c = collect(chunks);
    expect(c.text).toBe("Okay, let's check the weather for San Francisco, CA:");
    expect(c.toolCalls).toEqual([
      {
        id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        name: 'get_weather',
        arguments: '{"location": "San Francisco, CA", "unit": "fahrenheit"}',
      },
      { id: 'toolu_01Ua4yqGkuQp2bTU7bNtnjLS', name: 'get_time', arguments: '{"timezone": "America/Los_Angeles"}' },
    ]);
    const indexes = chunks.flatMap((ch) => ch.choices[0].delta.tool_calls ?? []).map((t) => t.index);
    expect(new Set(indexes)).toEqual(new Set([0, 1]));
    expect(c.finish).toBe('tool_calls');
    // message_delta repeats the input side: it replaces, it is not added
    expect(decoder.usage()).toEqual({
      prompt_tokens: 600,
      completion_tokens: 89,
      total_tokens: 689,
      prompt_tokens_details: { cached_tokens: 128, cache_creation_tokens: 0 },
    });
  });

  it('decodes thinking, its signature, then text', () => {
    const { chunks, decoder } = replayStream(codec, fixture(DIR, 'stream-thinking.sse'), opts);
    const c = collect(chunks);
    expect(c.reasoning).toBe(
      'I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n1071 = 2 × 462 + 147\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0\n\nSo the GCD is 21.',
    );
    expect(c.text).toBe('The greatest common divisor of 1071 and 462 is **21**.');
    const signature = chunks.map((ch) => ch.choices[0].delta.thinking_signature).filter(Boolean);
    expect(signature).toEqual([expect.stringMatching(/^EqQBCgIYAhIM/)]);
    expect(decoder.usage()).toMatchObject({
      prompt_tokens: 85,
      completion_tokens: 178,
      prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 1024 },
    });
  });

  it('throws on an error event so the relay reports a failed stream', () => {
    const sse =
      fixture(DIR, 'stream-text.sse').split('event: content_block_stop')[0] +
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    expect(() => decodeSse(codec.streamToHub(opts), [Buffer.from(sse)])).toThrow(ClaudeStreamError);
    expect(() => decodeSse(codec.streamToHub(opts), [Buffer.from(sse)])).toThrow('Overloaded');
  });
});

describe('requestToHub', () => {
  it('converts a full Claude request', () => {
    const hub = codec.requestToHub(json('request-full.json'));
    expect(hub.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(hub.messages[0].content).toEqual([
      { type: 'text', text: 'You are a helpful travel assistant.' },
      {
        type: 'text',
        text: 'Reference: the full city guide for San Francisco (long text kept in the prompt cache).',
        cache_control: { type: 'ephemeral' },
      },
    ]);
    const user = hub.messages[1].content as any[];
    expect(user[0].image_url.url).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
    expect(user[1].image_url.url).toBe('https://upload.wikimedia.org/wikipedia/commons/a/a7/Golden_Gate_Bridge.jpg');
    const assistant = hub.messages[2];
    expect(assistant.content).toBe('Both show San Francisco. Let me check the weather.');
    expect(assistant.tool_calls).toEqual([
      {
        id: 'toolu_01A09q90qw90lq917835lq9',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' },
      },
    ]);
    expect(assistant.reasoning_content).toBe('Both pictures show San Francisco. I should look up the weather.');
    expect(assistant.thinking_blocks?.[0].signature).toMatch(/^EuYBCkQY/);
    expect(hub.messages[3]).toEqual({
      role: 'tool',
      tool_call_id: 'toolu_01A09q90qw90lq917835lq9',
      content: '15 degrees, foggy',
    });
    expect(hub.messages[4].content).toEqual([
      { type: 'text', text: 'Should I bring a jacket?', cache_control: { type: 'ephemeral' } },
    ]);
    expect(hub.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Get the current weather in a given location',
          parameters: json('request-full.json').tools[0].input_schema,
        },
      },
    ]);
    expect(hub).toMatchObject({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 4096,
      stream: true,
      tool_choice: 'auto',
      parallel_tool_calls: false,
      stop: ['\n\nHuman:', 'END'],
      thinking_budget: 2048,
      user: 'user-7f3a',
    });
  });

  it('keeps server tools out of the hub and lists them', () => {
    expect(anthropicServerTools(json('request-full.json'))).toEqual([
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
    ]);
    expect(
      anthropicServerTools({
        tools: [
          { name: 'a', input_schema: {} },
          { type: 'custom', name: 'b' },
        ],
      }),
    ).toEqual([]);
  });

  it('maps tool_choice, sampling and thinking', () => {
    const base = { model: 'c', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
    expect(codec.requestToHub({ ...base, tool_choice: { type: 'any' } }).tool_choice).toBe('required');
    expect(codec.requestToHub({ ...base, tool_choice: { type: 'none' } }).tool_choice).toBe('none');
    expect(codec.requestToHub({ ...base, tool_choice: { type: 'tool', name: 'f' } }).tool_choice).toEqual({
      type: 'function',
      function: { name: 'f' },
    });
    expect(codec.requestToHub({ ...base, temperature: 0.2, top_p: 0.9, top_k: 40 })).toMatchObject({
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
    });
    expect(codec.requestToHub({ ...base, thinking: { type: 'disabled' } }).thinking_budget).toBe(0);
    expect(codec.requestToHub({ ...base, system: 'Be brief.' }).messages[0]).toEqual({
      role: 'system',
      content: 'Be brief.',
    });
  });

  it('puts tool results before the rest of the user turn, in order, and reads block results', () => {
    const hub = codec.requestToHub({
      model: 'c',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 't1', name: 'a', input: {} },
            { type: 'tool_use', id: 't2', name: 'b', input: { x: 1 } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'both done' },
            { type: 'tool_result', tool_use_id: 't1', content: 'one' },
            {
              type: 'tool_result',
              tool_use_id: 't2',
              content: [
                { type: 'text', text: 'two' },
                { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
              ],
            },
          ],
        },
      ],
    });
    expect(hub.messages[1]).toMatchObject({ role: 'assistant', content: null });
    expect(hub.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'one' },
      {
        role: 'tool',
        tool_call_id: 't2',
        content: [
          { type: 'text', text: 'two' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
        ],
      },
      { role: 'user', content: 'both done' },
    ]);
  });

  it('validates like Anthropic', () => {
    const ok = { model: 'c', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
    // max_tokens may be left out: the channel's default is filled in (new-api's behaviour), but not be nonsense
    expect(codec.requestToHub({ ...ok, max_tokens: undefined }).max_tokens).toBeUndefined();
    expectFormatError(() => codec.requestToHub({ ...ok, max_tokens: 0 }), /max_tokens/);
    expectFormatError(() => codec.requestToHub({ ...ok, model: undefined }), 'model: Field required');
    expectFormatError(() => codec.requestToHub({ ...ok, messages: undefined }), 'messages: Field required');
    expectFormatError(() => codec.requestToHub({ ...ok, messages: [] }), /messages/);
    expectFormatError(() => codec.requestToHub({ ...ok, messages: 'hi' }), /messages/);
    expectFormatError(
      () => codec.requestToHub({ ...ok, messages: [{ role: 'system', content: 'x' }] }),
      "messages.0.role: Input should be 'user' or 'assistant'",
    );
    expectFormatError(
      () => codec.requestToHub({ ...ok, messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }),
      /messages\.0\.content\.0\.type: 'document'/,
    );
  });

  it('reads a count_tokens body without max_tokens', () => {
    const hub = countTokensRequestToHub({ model: 'c', messages: [{ role: 'user', content: 'hi' }] });
    expect(hub.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(hub.max_tokens).toBeUndefined();
    expect(countTokensResponse(14)).toEqual({ input_tokens: 14 });
  });
});

describe('requestFromHub', () => {
  const upstream = { model: 'claude-opus-4-1', stream: false, defaultMaxTokens: 2048 };
  const base = (messages: HubRequest['messages'], extra: Partial<HubRequest> = {}): HubRequest => ({
    model: 'gpt-4o',
    messages,
    ...extra,
  });

  it('round trips a Claude request, keeping its meaning', () => {
    const original = json('request-full.json');
    const body = codec.requestFromHub(codec.requestToHub(original), { ...upstream, stream: true }) as any;
    expect(body.model).toBe('claude-opus-4-1');
    expect(body.system).toEqual(original.system);
    expect(body.messages.slice(0, 2)).toEqual(original.messages.slice(0, 2));
    // the text-only tool result comes back as a string, the same meaning as its one text block
    expect(body.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: '15 degrees, foggy' },
        original.messages[2].content[1],
      ],
    });
    expect(body.tools).toEqual([original.tools[0]]);
    expect(body).toMatchObject({
      max_tokens: 4096,
      tool_choice: original.tool_choice,
      stop_sequences: original.stop_sequences,
      thinking: original.thinking,
      metadata: original.metadata,
      stream: true,
    });
  });

  it('merges same-role turns and groups consecutive tool results into one user turn', () => {
    const body = codec.requestFromHub(
      base([
        { role: 'system', content: 'A' },
        { role: 'user', content: 'one' },
        { role: 'developer', content: 'B' },
        { role: 'user', content: [{ type: 'text', text: 'two' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            { id: 'c2', type: 'function', function: { name: 'g', arguments: 'not json' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'r1' },
        { role: 'tool', tool_call_id: 'c2', content: 'r2' },
        { role: 'user', content: 'thanks' },
        { role: 'assistant', content: 'ok' },
        { role: 'assistant', content: 'more' },
      ]),
      upstream,
    ) as any;
    expect(body.system).toBe('A\nB');
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'c1', name: 'f', input: { a: 1 } },
          { type: 'tool_use', id: 'c2', name: 'g', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: 'r1' },
          { type: 'tool_result', tool_use_id: 'c2', content: 'r2' },
          { type: 'text', text: 'thanks' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'ok' },
          { type: 'text', text: 'more' },
        ],
      },
    ]);
  });

  it('puts tool results first even when user text came before them', () => {
    const body = codec.requestFromHub(
      base([
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'user', content: 'note' },
        { role: 'tool', tool_call_id: 'c1', content: 'r1' },
      ]),
      upstream,
    ) as any;
    expect(body.messages[1].content.map((b: any) => b.type)).toEqual(['tool_result', 'text']);
    const empty = codec.requestFromHub(base([{ role: 'tool', tool_call_id: 'c9', content: null }]), upstream) as any;
    expect(empty.messages).toEqual([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c9' }] }]);
  });

  it('keeps signed thinking first, drops unsigned reasoning', () => {
    const body = codec.requestFromHub(
      base([
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: 'answer',
          reasoning_content: 'thought',
          thinking_blocks: [
            { thinking: 'thought', signature: 'sig1' },
            { thinking: '', redacted: 'REDACTED' },
            { thinking: 'unsigned' },
          ],
        },
        { role: 'user', content: 'q2' },
        { role: 'assistant', content: 'a2', reasoning_content: 'from deepseek' },
      ]),
      upstream,
    ) as any;
    expect(body.messages[1].content).toEqual([
      { type: 'thinking', thinking: 'thought', signature: 'sig1' },
      { type: 'redacted_thinking', data: 'REDACTED' },
      { type: 'text', text: 'answer' },
    ]);
    expect(body.messages[3].content).toEqual([{ type: 'text', text: 'a2' }]);
  });

  it('defaults max_tokens: max_completion_tokens, then max_tokens, then the channel default', () => {
    const msgs: HubRequest['messages'] = [{ role: 'user', content: 'q' }];
    const mt = (extra: Partial<HubRequest>, o = upstream) =>
      (codec.requestFromHub(base(msgs, extra), o) as any).max_tokens;
    expect(mt({ max_completion_tokens: 100, max_tokens: 50 })).toBe(100);
    expect(mt({ max_tokens: 50 })).toBe(50);
    expect(mt({})).toBe(2048);
    expect(mt({}, { model: 'c', stream: false } as any)).toBeGreaterThan(0);
  });

  it('applies Claude thinking rules', () => {
    const msgs: HubRequest['messages'] = [{ role: 'user', content: 'q' }];
    const on = codec.requestFromHub(
      base(msgs, { thinking_budget: 3000, max_tokens: 8000, temperature: 0.5, top_k: 5, top_p: 0.9 }),
      upstream,
    ) as any;
    expect(on.thinking).toEqual({ type: 'enabled', budget_tokens: 3000 });
    expect(on.temperature).toBeUndefined();
    expect(on.top_k).toBeUndefined();
    expect(on.top_p).toBeUndefined();
    expect((codec.requestFromHub(base(msgs, { thinking_budget: 3000, top_p: 0.95 }), upstream) as any).top_p).toBe(
      0.95,
    );
    const off = codec.requestFromHub(base(msgs, { thinking_budget: 0, temperature: 0.5, top_k: 5 }), upstream) as any;
    expect(off.thinking).toBeUndefined();
    expect(off).toMatchObject({ temperature: 0.5, top_k: 5 });
    const effort = (reasoning_effort: string, max_tokens: number) =>
      (codec.requestFromHub(base(msgs, { reasoning_effort, max_tokens }), upstream) as any).thinking;
    expect(effort('low', 8000)).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(effort('medium', 8000)).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(effort('high', 8000)).toEqual({ type: 'enabled', budget_tokens: 7999 });
    expect(effort('high', 32000)).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(effort('low', 1000)).toBeUndefined();
  });

  it('converts images, stops, tools, tool_choice, response_format and user', () => {
    const body = codec.requestFromHub(
      base(
        [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGR' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
              { type: 'text', text: 'what?' },
            ],
          },
        ],
        {
          stop: 'END',
          tools: [{ type: 'function', function: { name: 'noop' } }],
          tool_choice: 'required',
          response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
          user: 'u1',
          seed: 4,
        },
      ),
      upstream,
    ) as any;
    expect(body.messages[0].content.slice(0, 2)).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: 'UklGR' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
    expect(body.stop_sequences).toEqual(['END']);
    expect(body.tools).toEqual([{ name: 'noop', input_schema: { type: 'object', properties: {} } }]);
    expect(body.tool_choice).toEqual({ type: 'any' });
    expect(body.system).toMatch(/JSON object matching this JSON schema: \{"type":"object"\}/);
    expect(body.metadata).toEqual({ user_id: 'u1' });
    expect(body.seed).toBeUndefined();
    expect(body.stream).toBe(false);
    const choice = (c: HubRequest['tool_choice'], p?: boolean) =>
      (
        codec.requestFromHub(
          base([{ role: 'user', content: 'q' }], { tool_choice: c, parallel_tool_calls: p }),
          upstream,
        ) as any
      ).tool_choice;
    expect(choice('none')).toEqual({ type: 'none' });
    expect(choice({ type: 'function', function: { name: 'f' } }, false)).toEqual({
      type: 'tool',
      name: 'f',
      disable_parallel_tool_use: true,
    });
    expect(choice(undefined, false)).toEqual({ type: 'auto', disable_parallel_tool_use: true });
  });

  it('refuses n > 1', () => {
    expectFormatError(() => codec.requestFromHub(base([{ role: 'user', content: 'q' }], { n: 2 }), upstream), /^n: /);
  });
});

describe('responseFromHub', () => {
  const hubAnswer = (extra: Partial<HubResponse> = {}): HubResponse => ({
    id: 'chatcmpl-9',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: 'Let me look.',
          reasoning_content: 'hmm',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"q":"x"}' } }],
        },
      },
    ],
    usage: {
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      prompt_tokens_details: { cached_tokens: 40, cache_creation_tokens: 7 },
    },
    ...extra,
  });

  it('writes a Claude message', () => {
    expect(codec.responseFromHub(hubAnswer(), opts)).toEqual({
      id: 'msg_req123',
      type: 'message',
      role: 'assistant',
      model: opts.model,
      content: [
        { type: 'thinking', thinking: 'hmm', signature: '' },
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { q: 'x' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 60, output_tokens: 20, cache_read_input_tokens: 40, cache_creation_input_tokens: 7 },
    });
  });

  it('round trips Claude answers, stop reasons and ids included', () => {
    for (const name of ['message-text.json', 'message-tools.json', 'message-thinking.json', 'message-cache.json']) {
      const original = json(name);
      const back = codec.responseFromHub(codec.responseToHub(original, 'x'), { id: 'r', model: original.model }) as any;
      const { service_tier: _t, cache_creation: _c, ...usage } = original.usage;
      expect(back, name).toEqual({ ...original, usage });
    }
  });

  it('maps finish reasons when the native one is not Claude’s', () => {
    const stop = (finish: any, extra: Partial<HubResponse> = {}) => {
      const h = hubAnswer(extra);
      h.choices[0].finish_reason = finish;
      return (codec.responseFromHub(h, opts) as any).stop_reason;
    };
    expect(stop('stop')).toBe('end_turn');
    expect(stop('stop', { stop_sequence: 'END' })).toBe('stop_sequence');
    expect(stop('length')).toBe('max_tokens');
    expect(stop('content_filter')).toBe('refusal');
    expect(stop('stop', { native_finish_reason: 'STOP' })).toBe('end_turn');
    expect(stop('stop', { native_finish_reason: 'pause_turn' })).toBe('pause_turn');
  });
});

describe('streamFromHub', () => {
  const hubStream = (): HubChunk[] => [
    chunk({ role: 'assistant', content: '' }, { usage: { prompt_tokens: 50, completion_tokens: 0, total_tokens: 50 } }),
    chunk({ reasoning_content: 'Let me ' }),
    chunk({ reasoning_content: 'think.' }),
    chunk({ thinking_signature: 'sigABC' }),
    chunk({ content: 'Sure, ' }),
    chunk({ content: 'checking.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
    { ...chunk({}), choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
  ];
  const finalUsage = {
    prompt_tokens: 50,
    completion_tokens: 30,
    total_tokens: 80,
    prompt_tokens_details: { cached_tokens: 10, cache_creation_tokens: 5 },
  };

  function encode(chunks: HubChunk[], usage = finalUsage): string {
    const enc = codec.streamFromHub(opts);
    expect(enc.contentType).toBe('text/event-stream');
    return chunks.map((c) => enc.push(c)).join('') + enc.end(usage) + enc.end(usage);
  }

  it('writes the events in Claude’s order', () => {
    const evs = events(encode(hubStream()));
    expect(evs.every((e) => e.event === e.data.type)).toBe(true);
    expect(evs.map((e) => e.event + (e.data.delta?.type ? `:${e.data.delta.type}` : ''))).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta:thinking_delta',
      'content_block_delta:thinking_delta',
      'content_block_delta:signature_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta:text_delta',
      'content_block_delta:text_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta:input_json_delta',
      'content_block_delta:input_json_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const starts = evs.filter((e) => e.event === 'content_block_start');
    expect(starts.map((e) => [e.data.index, e.data.content_block.type])).toEqual([
      [0, 'thinking'],
      [1, 'text'],
      [2, 'tool_use'],
      [3, 'tool_use'],
    ]);
    expect(evs[0].data.message).toMatchObject({
      id: 'msg_req123',
      type: 'message',
      role: 'assistant',
      model: opts.model,
      content: [],
      stop_reason: null,
      usage: { input_tokens: 50, output_tokens: 0 },
    });
    expect(evs.at(-2)?.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 30, input_tokens: 40, cache_read_input_tokens: 10, cache_creation_input_tokens: 5 },
    });
  });

  it('decodes back to the same text, reasoning, tools and usage', () => {
    const sse = encode(hubStream());
    const { chunks, decoder } = replayStream(codec, sse, opts);
    const back = collect(chunks);
    const sent = collect(hubStream());
    expect(back.text).toBe(sent.text);
    expect(back.reasoning).toBe(sent.reasoning);
    expect(back.toolCalls).toEqual(sent.toolCalls);
    expect(back.finish).toBe('tool_calls');
    expect(chunks.map((c) => c.choices[0].delta.thinking_signature).filter(Boolean)).toEqual(['sigABC']);
    expect(decoder.usage()).toEqual(finalUsage);
  });

  it('opens a new thinking block after a signed one, and ends an empty stream properly', () => {
    const evs = events(
      encode([
        chunk({ reasoning_content: 'a' }),
        chunk({ thinking_signature: 's1' }),
        chunk({ reasoning_content: 'b' }),
      ]),
    );
    expect(evs.filter((e) => e.event === 'content_block_start').map((e) => e.data.index)).toEqual([0, 1]);
    const empty = events(codec.streamFromHub(opts).end(null));
    expect(empty.map((e) => e.event)).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
    expect(empty[1].data).toEqual({ type: 'ping' });
    expect(empty[2].data.delta.stop_reason).toBe('end_turn');
  });

  it('writes an in-band error', () => {
    const enc = codec.streamFromHub(opts);
    enc.push(chunk({ content: 'hi' }));
    const out = enc.error({ status: 529, message: 'Overloaded', type: 'upstream_error', code: null });
    expect(out).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    );
    expect(enc.end(null)).toBe('');
  });
});

describe('errors', () => {
  it('parses Claude error bodies', () => {
    expect(codec.parseError(400, Buffer.from(fixture(DIR, 'error-invalid-request.json')))).toEqual({
      message: 'max_tokens: Field required',
      type: 'invalid_request_error',
      code: null,
      param: null,
    });
    expect(codec.parseError(529, Buffer.from(fixture(DIR, 'error-overloaded.json')))).toMatchObject({
      message: 'Overloaded',
      type: 'overloaded_error',
    });
    expect(codec.parseError(502, Buffer.from('<html>Bad Gateway</html>')).message).toBe('Bad Gateway');
    expect(codec.parseError(529, Buffer.from('')).message).toBe('Overloaded');
    expect(codec.parseError(403, Buffer.from('{"message":"not authorized"}')).message).toBe('not authorized');
  });

  it('writes relay errors in the Claude shape, status kept', () => {
    const types: Record<number, string> = {
      400: 'invalid_request_error',
      401: 'authentication_error',
      402: 'billing_error',
      403: 'permission_error',
      404: 'not_found_error',
      413: 'request_too_large',
      429: 'rate_limit_error',
      500: 'api_error',
      503: 'api_error',
      529: 'overloaded_error',
    };
    for (const [status, type] of Object.entries(types)) {
      const out = codec.errorBody({ status: Number(status), message: 'boom', type: 'new_api_error', code: null }, 'R1');
      expect(out.status).toBe(Number(status));
      expect(JSON.parse(out.body)).toEqual({ type: 'error', error: { type, message: 'boom (request id: R1)' } });
    }
  });
});

describe('citations', () => {
  // a recorded web-search answer: the cited claim is a text block of its own with its citations
  const answer = () => JSON.parse(fixture('../../src/relay/providers/anthropic/__fixtures__', 'answer.json'));
  const cited = 'the Eiffel Tower is 330 metres tall';

  it('reads text-block citations into the hub with the span of the answer text they support', () => {
    const msg = codec.responseToHub(answer(), 'x').choices[0].message;
    expect(msg.citations).toHaveLength(1);
    const [c] = msg.citations!;
    expect(msg.content!.slice(c.start_index, c.end_index)).toBe(cited);
    expect(c).toMatchObject({
      url: 'https://www.toureiffel.paris/en/the-monument/key-figures',
      title: 'Key figures of the Eiffel Tower',
      cited_text: 'Height: 330 metres (since 2022, with the new antenna). ',
      claude: { type: 'web_search_result_location', encrypted_index: 'Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm..' },
    });
  });

  it('gives a Claude client its citations back on the block they came with', () => {
    const hub = codec.responseToHub(answer(), 'x');
    const out = codec.responseFromHub(hub, opts) as { content: any[] };
    expect(out.content.map((b) => b.text).join('')).toBe(hub.choices[0].message.content);
    const block = out.content.find((b) => b.citations);
    expect(block.text).toBe(cited);
    expect(block.citations).toEqual([answer().content[4].citations[0]]);
    expect(out.content.filter((b) => b.citations)).toHaveLength(1);
  });

  it('gives an OpenAI client the web sources as url_citation annotations', () => {
    const hub = codec.responseToHub(answer(), 'x');
    const msg = (openaiCodec.responseFromHub(hub, opts) as any).choices[0].message;
    expect(msg.citations).toBeUndefined();
    expect(msg.annotations).toEqual([
      {
        type: 'url_citation',
        url_citation: {
          url: 'https://www.toureiffel.paris/en/the-monument/key-figures',
          title: 'Key figures of the Eiffel Tower',
          start_index: 45,
          end_index: 80,
        },
      },
    ]);
    expect(msg.content.slice(45, 80)).toBe(cited);
  });

  it('writes no citations for a Claude client when the sources came from another vendor', () => {
    const hub: HubResponse = {
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Spain won.',
            citations: [{ start_index: 0, end_index: 10, url: 'https://uefa.com', title: 'uefa.com' }],
          },
          finish_reason: 'stop',
        },
      ],
    };
    expect((codec.responseFromHub(hub, opts) as any).content).toEqual([{ type: 'text', text: 'Spain won.' }]);
  });
});
