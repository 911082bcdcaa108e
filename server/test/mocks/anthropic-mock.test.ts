// The Anthropic mock is faithful enough to test the relay against: the official SDK talks to it directly and gets
// what it gets from Anthropic (answers, streams, tool use, thinking, token counts, typed errors), and raw requests
// are refused the way Anthropic refuses them.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../helpers/mock-anthropic.js';
import { mockSignature } from '../helpers/mock-anthropic-rules.js';

let mock: MockAnthropic;
let client: Anthropic;

beforeAll(async () => {
  mock = await MockAnthropic.start();
  client = new Anthropic({ apiKey: ANTHROPIC_MOCK_KEY, baseURL: mock.url, maxRetries: 0 });
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

const MODEL = 'claude-sonnet-4-6';
const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: {
    type: 'object' as const,
    properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['location'],
  },
};

describe('Anthropic mock with the official SDK', () => {
  it('creates a deterministic text answer with usage', async () => {
    const msg = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hi to the whole world please' }],
    });
    expect(msg.type).toBe('message');
    expect(msg.id).toMatch(/^msg_01/);
    expect(msg.role).toBe('assistant');
    expect(msg.model).toBe(MODEL);
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello from claude: Say hi to the whole world' }]);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.stop_sequence).toBeNull();
    // 2 system words + 7 user words; 9 output words
    expect(msg.usage).toMatchObject({
      input_tokens: 9,
      output_tokens: 9,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    const rec = mock.requests[0];
    expect(rec.headers['x-api-key']).toBe(ANTHROPIC_MOCK_KEY);
    expect(rec.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('streams with finalMessage() and in Anthropic’s event order', async () => {
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'one two three four five six seven' }],
    });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Hello from claude: one two three four five six' }]);
    expect(texts.length).toBeGreaterThan(1);
    expect(final.usage.output_tokens).toBe(9);
    expect(final.usage.input_tokens).toBe(7);

    const raw = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const order: string[] = [];
    for await (const ev of raw) order.push(ev.type === 'content_block_delta' ? `delta:${ev.delta.type}` : ev.type);
    expect(order[0]).toBe('message_start');
    // the SDK drops ping events; the raw framing test below sees them
    expect(order[1]).toBe('content_block_start');
    expect(order.filter((e) => e === 'delta:text_delta').length).toBeGreaterThan(1);
    expect(order.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
  });

  it('sends the raw SSE framing and headers Anthropic sends', async () => {
    const res = await fetch(`${mock.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': ANTHROPIC_MOCK_KEY,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: MODEL, max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const text = await res.text();
    expect(text.startsWith('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_')).toBe(true);
    const names = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(text).toContain('event: ping\ndata: {"type":"ping"}\n\n');
    const start = JSON.parse(text.split('\n')[1].slice(6));
    expect(start.message).toMatchObject({ content: [], stop_reason: null, usage: { output_tokens: 1 } });
    expect(text).toContain('event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"');
    expect(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
  });

  it('calls a tool when tools are declared and the user asks for the weather, streamed in JSON pieces', async () => {
    const msg = await client.messages.create({
      model: MODEL,
      max_tokens: 200,
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    });
    expect(msg.stop_reason).toBe('tool_use');
    const use = msg.content.find((b) => b.type === 'tool_use');
    expect(use).toMatchObject({ name: 'get_weather', input: { location: 'Paris', unit: 'celsius' } });
    expect(use!.type === 'tool_use' && use!.id).toMatch(/^toolu_01/);

    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 200,
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather please' }],
    });
    const jsonPieces: string[] = [];
    stream.on('inputJson', (partial) => jsonPieces.push(partial));
    const final = await stream.finalMessage();
    expect(jsonPieces.filter((p) => p !== '').length).toBeGreaterThan(1);
    expect(final.content.at(-1)).toMatchObject({ type: 'tool_use', input: { location: 'Paris' } });
    expect(final.stop_reason).toBe('tool_use');

    // the tool result goes back with the tool_use it answers: accepted, answered in text
    const followUp = await client.messages.create({
      model: MODEL,
      max_tokens: 200,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: msg.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: use!.type === 'tool_use' ? use!.id : '', content: '18C sunny' },
          ],
        },
      ],
    });
    expect(followUp.stop_reason).toBe('end_turn');
    expect(followUp.content[0]).toMatchObject({ type: 'text', text: 'Hello from claude: the tool answered 18C sunny' });
  });

  it('thinks before answering, with a signature the mock accepts back unchanged', async () => {
    const params = {
      model: MODEL,
      max_tokens: 4000,
      thinking: { type: 'enabled' as const, budget_tokens: 2000 },
      messages: [{ role: 'user' as const, content: 'Why is the sky blue?' }],
    };
    const msg = await client.messages.create(params);
    expect(msg.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    const thinking = msg.content[0];
    expect(thinking.type === 'thinking' && thinking.signature).toBe(
      mockSignature('Thinking about: Why is the sky blue?'),
    );

    const events: string[] = [];
    const stream = client.messages.stream(params);
    stream.on('streamEvent', (ev) => {
      if (ev.type === 'content_block_delta') events.push(ev.delta.type);
    });
    const final = await stream.finalMessage();
    expect(final.content).toEqual(msg.content);
    expect(events.indexOf('signature_delta')).toBeGreaterThan(events.lastIndexOf('thinking_delta'));
    expect(events.indexOf('signature_delta')).toBeLessThan(events.indexOf('text_delta'));

    const next = await client.messages.create({
      ...params,
      messages: [...params.messages, { role: 'assistant', content: msg.content }, { role: 'user', content: 'And?' }],
    });
    expect(next.stop_reason).toBe('end_turn');
  });

  it('counts tokens with the same count messages use', async () => {
    const res = await client.messages.countTokens({
      model: MODEL,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hi to the whole world please' }],
    });
    expect(res).toEqual({ input_tokens: 9 });
  });

  it('lists models in Anthropic’s page shape', async () => {
    const page = await client.models.list({ limit: 2 });
    expect(page.data.map((m) => m.id)).toEqual(['claude-opus-4-6', 'claude-sonnet-4-6']);
    expect(page.data[0]).toMatchObject({ type: 'model', display_name: 'Claude Opus 4.6' });
    const res = await fetch(`${mock.url}/v1/models`, {
      headers: { 'x-api-key': ANTHROPIC_MOCK_KEY, 'anthropic-version': '2023-06-01' },
    });
    const body = await res.json();
    expect(body).toMatchObject({
      has_more: false,
      first_id: 'claude-opus-4-6',
      last_id: 'claude-haiku-4-5-20251001',
    });
    const all: string[] = [];
    for await (const m of client.models.list({ limit: 1 })) all.push(m.id);
    expect(all).toHaveLength(3);
  });

  it('reports cache usage when configured', async () => {
    mock.cache = { read: 3, creation: 2 };
    const msg = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'a b c d e f g h i j' }],
    });
    expect(msg.usage).toMatchObject({ input_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 2 });
  });

  it('stops at max_tokens and at a stop sequence', async () => {
    const short = await client.messages.create({
      model: MODEL,
      max_tokens: 3,
      messages: [{ role: 'user', content: 'tell me a long story' }],
    });
    expect(short.stop_reason).toBe('max_tokens');
    expect(short.content[0]).toMatchObject({ text: 'Hello from claude:' });
    const stopped = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      stop_sequences: ['story'],
      messages: [{ role: 'user', content: 'tell me a long story' }],
    });
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'story' });
  });

  it('raises the SDK’s error classes for 401, 400, 429 and 529', async () => {
    const bad = new Anthropic({ apiKey: 'wrong', baseURL: mock.url, maxRetries: 0 });
    const ask = (c: Anthropic) =>
      c.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const e401 = await ask(bad).catch((e) => e);
    expect(e401).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(e401.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect(e401.requestID).toMatch(/^req_/);

    const e400 = await client.messages
      .create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], n: 2 } as any)
      .catch((e) => e);
    expect(e400).toBeInstanceOf(Anthropic.BadRequestError);
    expect(e400.error.error.message).toBe('n: Extra inputs are not permitted');

    mock.behave = () => ({ kind: 'error', status: 429, type: 'rate_limit_error' });
    expect(await ask(client).catch((e) => e)).toBeInstanceOf(Anthropic.RateLimitError);

    mock.behave = () => ({ kind: 'error', status: 529, type: 'overloaded_error' });
    const e529 = await ask(client).catch((e) => e);
    expect(e529).toBeInstanceOf(Anthropic.InternalServerError);
    expect(e529.status).toBe(529);
    expect(e529.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });

  it('scripts an answer, an error event mid-stream, a broken stream and a delay', async () => {
    mock.behave = () => ({ kind: 'answer', content: [{ type: 'text', text: 'scripted' }] });
    const scripted = await client.messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(scripted.content).toEqual([{ type: 'text', text: 'scripted' }]);

    mock.behave = () => ({
      kind: 'default',
      stream: { errorAfterEvents: { after: 3, type: 'overloaded_error', message: 'Overloaded' } },
    });
    const midError = await client.messages
      .stream({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage()
      .catch((e) => e);
    expect(midError).toBeInstanceOf(Anthropic.APIError);
    expect(String(midError.message)).toContain('overloaded_error');

    mock.behave = () => ({ kind: 'default', stream: { breakAfterEvents: 3 } });
    const broken = await client.messages
      .stream({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage()
      .catch((e) => e);
    expect(broken).toBeInstanceOf(Error);

    mock.behave = () => ({ kind: 'default', delayMs: 150 });
    const t0 = Date.now();
    await client.messages.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });
});

describe('Anthropic mock rejections (raw fetch)', () => {
  const headers = {
    'x-api-key': ANTHROPIC_MOCK_KEY,
    'anthropic-version': '2023-06-01',
    'content-type': 'application/json',
  };
  const post = async (body: unknown, h: Record<string, string> = headers, path = '/v1/messages') => {
    const res = await fetch(`${mock.url}${path}`, {
      method: 'POST',
      headers: h,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const ok = { model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
  const expectInvalid = (r: { status: number; body: any }, message: string | RegExp) => {
    expect(r.status).toBe(400);
    expect(r.body.type).toBe('error');
    expect(r.body.error.type).toBe('invalid_request_error');
    if (typeof message === 'string') expect(r.body.error.message).toBe(message);
    else expect(r.body.error.message).toMatch(message);
  };

  it('wants x-api-key, not a Bearer token', async () => {
    const { 'x-api-key': _k, ...noKey } = headers;
    const missing = await post(ok, noKey);
    expect(missing.status).toBe(401);
    expect(missing.body.error).toEqual({ type: 'authentication_error', message: 'x-api-key header is required' });
    const bearer = await post(ok, { ...noKey, authorization: `Bearer ${ANTHROPIC_MOCK_KEY}` });
    expect(bearer.status).toBe(401);
    const wrong = await post(ok, { ...headers, 'x-api-key': 'sk-ant-nope' });
    expect(wrong.body.error).toEqual({ type: 'authentication_error', message: 'invalid x-api-key' });
  });

  it('wants anthropic-version', async () => {
    const { 'anthropic-version': _v, ...noVersion } = headers;
    expectInvalid(await post(ok, noVersion), 'anthropic-version: header is required');
  });

  it('refuses bodies that are not JSON or lack required fields', async () => {
    expectInvalid(await post('{not json'), /error parsing the body/);
    expectInvalid(await post({ max_tokens: 10, messages: ok.messages }), 'model: Field required');
    expectInvalid(await post({ model: MODEL, messages: ok.messages }), 'max_tokens: Field required');
    expectInvalid(await post({ model: MODEL, max_tokens: 10 }), 'messages: Field required');
  });

  it('refuses OpenAI-only fields as extra inputs', async () => {
    for (const [field, value] of [
      ['stream_options', { include_usage: true }],
      ['n', 1],
      ['frequency_penalty', 0.5],
    ] as const) {
      expectInvalid(await post({ ...ok, [field]: value }), `${field}: Extra inputs are not permitted`);
    }
    expectInvalid(
      await post({ ...ok, max_tokens: undefined, stream: true }, headers, '/v1/messages/count_tokens'),
      'stream: Extra inputs are not permitted',
    );
  });

  it('refuses a system role inside messages, and merges rather than refuses repeated roles', async () => {
    expectInvalid(
      await post({ ...ok, messages: [{ role: 'system', content: 'x' }, ...ok.messages] }),
      /^messages: Unexpected role "system"/,
    );
    const repeated = await post({
      ...ok,
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ],
    });
    expect(repeated.status).toBe(200);
  });

  it('accepts an assistant first turn as the first-party API does, refuses it when told to', async () => {
    const body = { ...ok, messages: [{ role: 'assistant', content: 'Hi' }, ...ok.messages] };
    expect((await post(body)).status).toBe(200);
    mock.rules = { requireUserFirst: true };
    expectInvalid(await post(body), 'messages: first message must use the "user" role');
  });

  it('refuses temperature with thinking enabled', async () => {
    expectInvalid(
      await post({ ...ok, max_tokens: 3000, temperature: 0.5, thinking: { type: 'enabled', budget_tokens: 1024 } }),
      /^`temperature` may only be set to 1 when thinking is enabled/,
    );
    expect(
      (await post({ ...ok, max_tokens: 3000, temperature: 1, thinking: { type: 'enabled', budget_tokens: 1024 } }))
        .status,
    ).toBe(200);
    expectInvalid(
      await post({
        ...ok,
        max_tokens: 3000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [weatherTool],
        tool_choice: { type: 'any' },
      }),
      'Thinking may not be enabled when tool_choice forces tool use.',
    );
    expectInvalid(
      await post({ ...ok, max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 1024 } }),
      '`max_tokens` must be greater than `thinking.budget_tokens`',
    );
  });

  it('refuses a tool_result that answers no tool_use of the previous turn', async () => {
    expectInvalid(
      await post({
        ...ok,
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: 'let me see' },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_ghost', content: 'x' }] },
        ],
      }),
      /^messages\.2\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_ghost/,
    );
    expectInvalid(
      await post({
        ...ok,
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'w', input: {} }] },
          { role: 'user', content: 'never mind' },
        ],
      }),
      /^messages\.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/,
    );
  });

  it('refuses thinking blocks without a signature, or with one that does not match', async () => {
    const withThinking = (block: Record<string, unknown>) => ({
      ...ok,
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [block, { type: 'text', text: 'a' }] },
        { role: 'user', content: 'q2' },
      ],
    });
    expectInvalid(
      await post(withThinking({ type: 'thinking', thinking: 'hmm' })),
      'messages.1.content.0.thinking.signature: Field required',
    );
    expectInvalid(
      await post(withThinking({ type: 'thinking', thinking: 'hmm, edited', signature: mockSignature('hmm') })),
      /Invalid `signature` in `thinking` block/,
    );
  });

  it('with thinking on, refuses a tool loop whose assistant turn lost its thinking block', async () => {
    const use = { type: 'tool_use', id: 'toolu_1', name: 'w', input: {} };
    const loop = (assistant: unknown[], thinking: unknown = { type: 'enabled', budget_tokens: 1024 }) => ({
      ...ok,
      max_tokens: 3000,
      thinking,
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: assistant },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '21C' }] },
      ],
    });
    expectInvalid(
      await post(loop([use])),
      /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`\. When `thinking` is enabled, a final `assistant` message must start with a thinking block/,
    );
    const signed = { type: 'thinking', thinking: 'hmm', signature: mockSignature('hmm') };
    expect((await post(loop([signed, use]))).status).toBe(200);
    // without thinking there is nothing to continue, and a plain new user turn ends the loop
    expect((await post(loop([use], { type: 'disabled' }))).status).toBe(200);
    const ended = loop([use]);
    ended.messages.push({ role: 'assistant', content: 'It is 21C.' } as any, { role: 'user', content: 'thanks' });
    expect((await post(ended)).status).toBe(200);
  });

  it('answers unknown paths with a not_found_error', async () => {
    const res = await fetch(`${mock.url}/v1/complete/nothing`, { headers });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.type).toBe('not_found_error');
  });
});
