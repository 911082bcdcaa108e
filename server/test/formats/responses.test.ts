// The Responses API codec (relay/formats/responses): requests into the hub and the refusals a chat-only upstream
// forces, recorded Responses streams into hub chunks, and — most important — hub answers written as Responses
// answers and streams that the official `openai` SDK reads back.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormatError } from '../../src/relay/formats/codec.js';
import { responsesCodec } from '../../src/relay/formats/responses/index.js';
import type { HubChunk, HubDelta, HubFinishReason, HubResponse, HubUsage } from '../../src/relay/hub/types.js';
import { collect, decodeSse, fixture, replayStream } from './conformance.js';

const DIR = '../../src/relay/formats/responses/__fixtures__';
const json = (name: string): Record<string, any> => JSON.parse(fixture(DIR, name));

function refusal(body: Record<string, any>): FormatError {
  try {
    responsesCodec.requestToHub(body);
  } catch (e) {
    expect(e).toBeInstanceOf(FormatError);
    return e as FormatError;
  }
  throw new Error('expected a FormatError');
}

describe('requestToHub', () => {
  it('maps instructions, a string input and the sampling fields', () => {
    const hub = responsesCodec.requestToHub(json('request-text.json'));
    expect(hub).toEqual({
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: 'You are a concise assistant.' },
        { role: 'user', content: 'Write a one-sentence bedtime story about a unicorn.' },
      ],
      stream: true,
      max_tokens: 256,
      temperature: 0.7,
    });
  });

  it('merges consecutive function calls into one assistant turn carrying the reasoning', () => {
    const hub = responsesCodec.requestToHub(json('request-function-multiturn.json'));
    expect(hub.messages).toEqual([
      { role: 'developer', content: 'Answer with the tools when you can.' },
      { role: 'user', content: 'What is the weather like in Paris and Bogotá today?' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'The user wants two cities; I will call get_weather twice.',
        tool_calls: [
          {
            id: 'call_12345xyz',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"Paris, France"}' },
          },
          {
            id: 'call_67890abc',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"Bogotá, Colombia"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_12345xyz', content: '{"temperature": 18, "unit": "C"}' },
      { role: 'tool', tool_call_id: 'call_67890abc', content: '{"temperature": 14, "unit": "C"}' },
    ]);
    expect(hub.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Get current temperature for a given location.',
          parameters: json('request-function-multiturn.json').tools[0].parameters,
          strict: true,
        },
      },
    ]);
    expect(hub.tool_choice).toBe('auto');
    expect(hub.parallel_tool_calls).toBe(true);
    expect(hub.reasoning_effort).toBe('medium');
  });

  it('joins an assistant message and the calls that follow it into one turn', () => {
    const hub = responsesCodec.requestToHub({
      model: 'm',
      input: [
        { role: 'user', content: 'hi' },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Let me look.', annotations: [] }],
        },
        { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 'ok' }] },
      ],
    });
    expect(hub.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
    ]);
  });

  it('keeps an assistant text after its calls in the same turn, so tool results follow the calls', () => {
    const hub = responsesCodec.requestToHub({
      model: 'm',
      input: [
        { role: 'user', content: 'hi' },
        { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
        { role: 'assistant', content: 'Calling f.' },
        { type: 'function_call_output', call_id: 'call_1', output: 'done' },
      ],
    });
    expect(hub.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(hub.messages[1]).toMatchObject({ content: 'Calling f.', tool_calls: [{ id: 'call_1' }] });
  });

  it('maps text.format json_schema to response_format', () => {
    const hub = responsesCodec.requestToHub(json('request-json-schema.json'));
    expect(hub.messages[0]).toEqual({ role: 'system', content: 'Extract the event information.' });
    expect(hub.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'calendar_event',
        schema: json('request-json-schema.json').text.format.schema,
        strict: true,
      },
    });
    const obj = responsesCodec.requestToHub({ model: 'm', input: 'x', text: { format: { type: 'json_object' } } });
    expect(obj.response_format).toEqual({ type: 'json_object' });
  });

  it('keeps images as image_url parts and tool_choice for one function', () => {
    const hub = responsesCodec.requestToHub({
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'what is this?' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
          ],
        },
      ],
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }],
      tool_choice: { type: 'function', name: 'f' },
      user: 'u-1',
      stream_options: { include_obfuscation: false },
    });
    expect(hub.messages[0].content).toEqual([
      { type: 'text', text: 'what is this?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
    ]);
    expect(hub.tool_choice).toEqual({ type: 'function', function: { name: 'f' } });
    expect(hub.user).toBe('u-1');
    expect(hub).not.toHaveProperty('stream_options');
  });

  it('refuses hosted tools by name', () => {
    const e = refusal(json('request-web-search.json'));
    expect(e.status).toBe(400);
    expect(e.message).toBe("tool type 'web_search_preview' is not supported on this channel");
    for (const type of ['web_search', 'file_search', 'code_interpreter', 'computer_use_preview', 'mcp', 'custom'])
      expect(refusal({ model: 'm', input: 'x', tools: [{ type }] }).message).toBe(
        `tool type '${type}' is not supported on this channel`,
      );
  });

  it('refuses conversation state, stored items and file ids', () => {
    expect(refusal({ model: 'm', input: 'x', previous_response_id: 'resp_1' }).message).toBe(
      'previous_response_id is not supported on this channel',
    );
    expect(refusal({ model: 'm', input: 'x', conversation: 'conv_1' }).param).toBe('conversation');
    expect(refusal({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] }).message).toMatch(/item_reference/);
    const img = { role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] };
    expect(refusal({ model: 'm', input: [img] }).message).toMatch(/file_id is not supported/);
    expect(refusal({ model: 'm', input: 'x', tool_choice: { type: 'web_search_preview' } }).param).toBe('tool_choice');
  });
});

describe('streamToHub and responseToHub (a Responses-speaking upstream)', () => {
  it('replays the text stream', () => {
    const { chunks, decoder } = replayStream(responsesCodec, fixture(DIR, 'stream-text.sse'), { id: 'r1', model: 'm' });
    const got = collect(chunks);
    expect(got.text).toBe(
      'Under a silver moon, a sleepy unicorn named Lumi tiptoed through the clouds and found the stars humming her a lullaby.',
    );
    expect(got.finish).toBe('stop');
    expect(decoder.usage()).toEqual({ prompt_tokens: 36, completion_tokens: 27, total_tokens: 63 });
  });

  it('replays the reasoning and function call stream', () => {
    const sse = fixture(DIR, 'stream-function-call-reasoning.sse');
    const { chunks, decoder } = replayStream(responsesCodec, sse, { id: 'r2', model: 'm' });
    const got = collect(chunks);
    expect(got.reasoning).toBe(
      '**Checking the weather**\n\nThe user asks about Paris; I should call get_weather with the city.',
    );
    expect(got.toolCalls).toEqual([
      { id: 'call_Rl0Xh5gpqUQDJ5OnMDw2qI8V', name: 'get_weather', arguments: '{"location":"Paris, France"}' },
    ]);
    expect(got.finish).toBe('tool_calls');
    expect(decoder.usage()).toEqual({
      prompt_tokens: 75,
      completion_tokens: 150,
      total_tokens: 225,
      completion_tokens_details: { reasoning_tokens: 128 },
    });
  });

  it('reads a whole answer with a function call', () => {
    const hub = responsesCodec.responseToHub(json('response-function-call.json'), 'm');
    expect(hub.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_unLAR8MvFNptuiZK6K6HCy5k',
            type: 'function',
            function: { name: 'get_current_weather', arguments: '{"location":"Boston, MA","unit":"celsius"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
    });
    expect(hub.usage).toEqual({ prompt_tokens: 291, completion_tokens: 23, total_tokens: 314 });
  });

  it('turns an upstream error event into a thrown error', () => {
    const decoder = responsesCodec.streamToHub({ id: 'x', model: 'm' });
    expect(() =>
      decoder.push(JSON.stringify({ type: 'error', code: 'server_error', message: 'boom', param: null }), 'error'),
    ).toThrow('boom');
  });
});

describe('requestFromHub', () => {
  it('writes a Responses request from a hub request', () => {
    const hub = responsesCodec.requestToHub(json('request-function-multiturn.json'));
    const body = responsesCodec.requestFromHub(hub, { model: 'o4-mini', stream: true });
    expect(body).toMatchObject({ model: 'o4-mini', stream: true, store: false, reasoning: { effort: 'medium' } });
    expect(body.input).toEqual([
      { type: 'message', role: 'developer', content: 'Answer with the tools when you can.' },
      { type: 'message', role: 'user', content: 'What is the weather like in Paris and Bogotá today?' },
      {
        type: 'function_call',
        call_id: 'call_12345xyz',
        name: 'get_weather',
        arguments: '{"location":"Paris, France"}',
      },
      {
        type: 'function_call',
        call_id: 'call_67890abc',
        name: 'get_weather',
        arguments: '{"location":"Bogotá, Colombia"}',
      },
      { type: 'function_call_output', call_id: 'call_12345xyz', output: '{"temperature": 18, "unit": "C"}' },
      { type: 'function_call_output', call_id: 'call_67890abc', output: '{"temperature": 14, "unit": "C"}' },
    ]);
    expect((body.tools as any[])[0]).toMatchObject({ type: 'function', name: 'get_weather', strict: true });
  });
});

// ---- hub → Responses, read back by the official SDK ----

const USAGE: HubUsage = {
  prompt_tokens: 20,
  completion_tokens: 12,
  total_tokens: 32,
  prompt_tokens_details: { cached_tokens: 4 },
  completion_tokens_details: { reasoning_tokens: 5 },
};

function chunk(delta: HubDelta, finish: HubFinishReason | null = null, usage?: HubUsage): HubChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'deepseek-chat',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  };
}

const TEXT_CHUNKS = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Hello' }),
  chunk({ content: ', wörld 🌍' }),
  chunk({}, 'stop'),
  chunk({}, null, USAGE),
];

const TOOL_CHUNKS = [
  chunk({ role: 'assistant', reasoning_content: 'Need the ' }),
  chunk({ reasoning_content: 'weather.' }),
  chunk({ content: 'Checking.' }),
  chunk({
    tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({
    tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
  }),
  chunk({}, 'tool_calls', USAGE),
];

function encode(
  chunks: HubChunk[],
  opts: { finalUsage?: HubUsage | null; request?: Record<string, any> } = {},
): string {
  const enc = responsesCodec.streamFromHub({ id: 'abc123', model: 'deepseek-chat', request: opts.request } as any);
  return chunks.map((c) => enc.push(c)).join('') + enc.end(opts.finalUsage ?? null);
}

/** What the fake upstream answers next: an SSE body or a JSON body. */
let next: { sse?: string; json?: unknown } = {};
let server: http.Server;
let client: OpenAI;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/responses') {
        res.writeHead(404).end();
        return;
      }
      if (next.sse != null) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(next.sse);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(next.json));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  client = new OpenAI({ apiKey: 'sk-test', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('streamFromHub read by the openai SDK', () => {
  it('streams text: typed events in order, sequence numbers from 0, no [DONE]', async () => {
    next = { sse: encode(TEXT_CHUNKS) };
    expect(next.sse).not.toContain('[DONE]');
    const stream = await client.responses.create({ model: 'deepseek-chat', input: 'hi', stream: true });
    const events: any[] = [];
    for await (const ev of stream) events.push(ev);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const done = events.at(-1).response;
    expect(done.id).toBe('resp_abc123');
    expect(done.status).toBe('completed');
    expect(done).not.toHaveProperty('output_text');
    expect(done.usage).toEqual({
      input_tokens: 20,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 12,
      output_tokens_details: { reasoning_tokens: 5 },
      total_tokens: 32,
    });
  });

  it('gives finalResponse() the text and usage', async () => {
    next = { sse: encode(TEXT_CHUNKS) };
    const final = await client.responses.stream({ model: 'deepseek-chat', input: 'hi' }).finalResponse();
    expect(final.output_text).toBe('Hello, wörld 🌍');
    expect(final.usage?.total_tokens).toBe(32);
    expect(final.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
  });

  it('streams reasoning, text and function calls as separate items', async () => {
    const request = { model: 'deepseek-chat', input: 'hi', tools: [{ type: 'function', name: 'get_weather' }] };
    next = { sse: encode(TOOL_CHUNKS, { request }) };
    const deltas: string[] = [];
    const stream = client.responses.stream({ model: 'deepseek-chat', input: 'hi' });
    stream.on('response.function_call_arguments.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(final.output[0]).toMatchObject({ summary: [{ type: 'summary_text', text: 'Need the weather.' }] });
    expect(final.output_text).toBe('Checking.');
    expect(final.output[2]).toMatchObject({
      type: 'function_call',
      call_id: 'call_a',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    });
    expect(final.output[3]).toMatchObject({ call_id: 'call_b', name: 'get_time', arguments: '{}' });
    expect(deltas).toEqual(['{"city":', '"Paris"}', '{}']);
    expect(final.tools).toEqual(request.tools);
    expect(final.usage?.output_tokens_details.reasoning_tokens).toBe(5);
  });

  it('writes each signed thinking block as its own reasoning item with encrypted_content, read back as blocks', async () => {
    next = {
      sse: encode([
        chunk({ reasoning_content: 'First ' }),
        chunk({ reasoning_content: 'thought.' }),
        chunk({ thinking_signature: 'sig-1' }),
        chunk({ redacted_thinking: 'opaque' }),
        chunk({ reasoning_content: 'Second.' }),
        chunk({ thinking_signature: 'sig-2' }),
        chunk({
          tool_calls: [
            { index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        }),
        chunk({}, 'tool_calls', USAGE),
      ]),
    };
    const events: any[] = [];
    for await (const ev of await client.responses.create({ model: 'm', input: 'hi', stream: true })) events.push(ev);
    const items = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item);
    expect(items.map((i) => i.type)).toEqual(['reasoning', 'reasoning', 'reasoning', 'function_call']);
    expect(items[0].summary).toEqual([{ type: 'summary_text', text: 'First thought.' }]);
    expect(items[0].encrypted_content).toEqual(expect.stringContaining('sig-1'));
    // a redacted block has no summary: no summary part events for it
    expect(items[1].summary).toEqual([]);
    const redactedParts = events.filter((e) => e.item_id === items[1].id && e.type.includes('summary'));
    expect(redactedParts).toEqual([]);
    expect(items[2].encrypted_content).toEqual(expect.stringContaining('sig-2'));
    expect(events.at(-1).response.output).toEqual(items);

    const hub = responsesCodec.requestToHub({
      model: 'm',
      input: [
        { role: 'user', content: 'hi' },
        ...items,
        { type: 'function_call_output', call_id: 'call_a', output: 'ok' },
      ],
    });
    expect(hub.messages[1].thinking_blocks).toEqual([
      { thinking: 'First thought.', signature: 'sig-1' },
      { thinking: '', redacted: 'opaque' },
      { thinking: 'Second.', signature: 'sig-2' },
    ]);
  });

  it("does not take a reasoning item's foreign encrypted_content (OpenAI's own) for a signature", () => {
    const hub = responsesCodec.requestToHub({
      model: 'm',
      input: [
        { role: 'user', content: 'hi' },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Hm.' }], encrypted_content: 'gAAAAB-openai' },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'ok' },
      ],
    });
    expect(hub.messages[1].reasoning_content).toBe('Hm.');
    expect(hub.messages[1].thinking_blocks).toBeUndefined();
  });

  it('ends with response.incomplete when the answer hit the token limit', async () => {
    next = { sse: encode([chunk({ content: 'cut' }), chunk({}, 'length')], { finalUsage: USAGE }) };
    const stream = await client.responses.create({ model: 'deepseek-chat', input: 'hi', stream: true });
    const events: any[] = [];
    for await (const ev of stream) events.push(ev);
    const last = events.at(-1);
    expect(last.type).toBe('response.incomplete');
    expect(last.response.status).toBe('incomplete');
    expect(last.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(last.response.usage.total_tokens).toBe(32);
  });

  it('writes an error event and response.failed when the upstream fails mid-stream', async () => {
    const enc = responsesCodec.streamFromHub({ id: 'abc123', model: 'deepseek-chat' });
    const sse =
      enc.push(chunk({ content: 'par' })) +
      enc.error({ status: 502, message: 'upstream reset', type: 'upstream_error', code: 'bad_gateway' });
    next = { sse };
    const stream = await client.responses.create({ model: 'deepseek-chat', input: 'hi', stream: true });
    const events: any[] = [];
    for await (const ev of stream) events.push(ev);
    const [error, failed] = events.slice(-2);
    expect(error).toEqual({
      type: 'error',
      code: 'bad_gateway',
      message: 'upstream reset',
      param: null,
      sequence_number: events.length - 2,
    });
    expect(failed.type).toBe('response.failed');
    expect(failed.response.error).toEqual({ code: 'bad_gateway', message: 'upstream reset' });
  });

  it('decodes back to the same hub content (encoder → decoder round trip)', () => {
    const { chunks } = decodeSse(responsesCodec.streamToHub({ id: 'x', model: 'm' }), [
      Buffer.from(encode(TOOL_CHUNKS)),
    ]);
    expect(collect(chunks)).toEqual({
      text: 'Checking.',
      reasoning: 'Need the weather.',
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_b', name: 'get_time', arguments: '{}' },
      ],
      finish: 'tool_calls',
    });
  });
});

describe('responseFromHub read by the openai SDK', () => {
  const hub: HubResponse = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'deepseek-chat',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'It is sunny.',
          reasoning_content: 'Look it up.',
          tool_calls: [{ id: 'call_z', type: 'function', function: { name: 'log', arguments: '{"x":1}' } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: USAGE,
  };

  it('gives output_text, the function call and usage', async () => {
    const body = responsesCodec.responseFromHub(hub, { id: 'abc123', model: 'deepseek-chat' }) as any;
    expect(body).not.toHaveProperty('output_text');
    next = { json: body };
    const r = await client.responses.create({ model: 'deepseek-chat', input: 'hi' });
    expect(r.id).toBe('resp_abc123');
    expect(r.object).toBe('response');
    expect(r.status).toBe('completed');
    expect(r.output_text).toBe('It is sunny.');
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(r.output[1]).toMatchObject({
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'It is sunny.', annotations: [] }],
    });
    expect(r.output[2]).toMatchObject({ type: 'function_call', call_id: 'call_z', name: 'log', arguments: '{"x":1}' });
    expect((r.output[2] as any).id).toMatch(/^fc_/);
    expect(r.usage).toEqual({
      input_tokens: 20,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 12,
      output_tokens_details: { reasoning_tokens: 5 },
      total_tokens: 32,
    });
  });

  it('marks a length-cut answer incomplete', () => {
    const cut = {
      ...hub,
      choices: [{ index: 0, message: { role: 'assistant' as const, content: 'cu' }, finish_reason: 'length' as const }],
    };
    const body = responsesCodec.responseFromHub(cut, { id: 'x', model: 'm' }) as any;
    expect(body.status).toBe('incomplete');
    expect(body.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });
});

describe('errors', () => {
  it("writes OpenAI's error shape with the request id", () => {
    const out = responsesCodec.errorBody(
      {
        status: 400,
        message: "tool type 'web_search' is not supported on this channel",
        type: 'invalid_request_error',
        code: null,
        param: 'tools[0]',
      },
      'req-1',
    );
    expect(out.status).toBe(400);
    expect(JSON.parse(out.body)).toEqual({
      error: {
        message: "tool type 'web_search' is not supported on this channel (request id: req-1)",
        type: 'invalid_request_error',
        param: 'tools[0]',
        code: null,
      },
    });
  });

  it('parses an OpenAI-shaped upstream error', () => {
    const body = Buffer.from(
      JSON.stringify({ error: { message: 'bad', type: 'invalid_request_error', param: 'input', code: null } }),
    );
    expect(responsesCodec.parseError(400, body)).toEqual({
      message: 'bad',
      type: 'invalid_request_error',
      param: 'input',
      code: null,
    });
  });
});
