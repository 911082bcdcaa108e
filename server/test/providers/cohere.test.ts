// Cohere (type 34) through the gateway: an OpenAI, Claude or Gemini (@google/genai) client's chat becomes Cohere's v1
// body (`message`, `chat_history`, `preamble`) at /v1/chat, stream and not; the newline-delimited JSON stream is read
// event by event and a stream in `data:` frames is refused as a bad answer; rerank passes to /v1/rerank, embeddings go
// to /v1/embed. Each is charged Cohere's billed units to the unit; Cohere's error or an image reaches the client as an
// error with nothing charged. Tools go as Cohere's parameter_definitions, its tool calls come back as OpenAI's (stream
// and not), and a tool's result goes as tool_results.
import Anthropic from '@anthropic-ai/sdk';
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client, logsOf, relayPost } from '../relay/fixtures.js';
import type { MockAnswer } from '../helpers/mock-json-vendor.js';
import { startCohereMock } from '../helpers/mock-cohere.js';
import {
  expectCharged,
  expectNothingCharged,
  geminiChat,
  snapshot,
  sqliteOnly,
  streamChat,
  vendorSuite,
} from './vendor-gateway.js';

const KEY = 'Xk4pQ9mR2sT7vW1yZ3bC5dF8gH0jK6lN';
const MODEL = 'command-r-plus';
const billed = { prompt: 7, completion: 7 };
/** new-api's fixed completion ratio of command-r-plus (5) over the billed units */
const QUOTA = 7 + 7 * 5;
const ask = [{ role: 'user' as const, content: 'What is the capital of France?' }];
const weatherAsk = [{ role: 'user' as const, content: 'What’s the weather in Paris right now?' }];
const WEATHER = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        },
        required: ['city'],
      },
    },
  },
];
/** the recorded tool call's billed units (tools/answer.json), at command-r-plus's completion ratio of 5 */
const toolBilled = { prompt: 41, completion: 23 };
const TOOL_QUOTA = 41 + 23 * 5;

const RERANK: MockAnswer = {
  status: 200,
  body: {
    id: '0c5a2e1f-8d7b-4a6c-9e3f-2b1d0c9a8e7f',
    results: [
      { index: 1, relevance_score: 0.9990312 },
      { index: 0, relevance_score: 0.0142213 },
    ],
    meta: { api_version: { version: '1' }, billed_units: { search_units: 1 } },
  },
};
const EMBED: MockAnswer = {
  status: 200,
  body: {
    id: 'e1d2c3b4-a596-4877-8899-aabbccddeeff',
    embeddings: [[0.5, -0.25, 0.125]],
    texts: ['hello'],
    meta: { api_version: { version: '1' }, billed_units: { input_tokens: 1 } },
    response_type: 'embeddings_floats',
  },
};

await describeEachDb('Cohere channels', (kind) => {
  const models = [MODEL, 'rerank-v3.5', 'embed-english-v3.0', 'fail-model', 'sse-model'];
  const suite = vendorSuite({
    kind,
    mock: () =>
      startCohereMock(KEY, {
        '/v1/rerank': (r) => (r.body?.query && Array.isArray(r.body.documents) ? RERANK : { status: 400, body: {} }),
        '/v1/embed': (r) =>
          Array.isArray(r.body?.texts) && r.body.input_type ? EMBED : { status: 400, body: { message: 'bad embed' } },
      }),
    channel: { type: 34, key: KEY, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite('the mock refuses a wrong key and an OpenAI body', async () => {
    const wrong = await fetch(`${suite.mock.url}/v1/chat`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
      body: JSON.stringify({ model: MODEL, message: 'hi' }),
    });
    expect(wrong.status).toBe(401);
    const openai = await fetch(`${suite.mock.url}/v1/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: MODEL, messages: ask }),
    });
    expect(openai.status).toBe(400);
  });

  it('sends Cohere’s v1 body and answers an OpenAI client, charged the billed units', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        ...ask,
      ],
      top_p: 1,
    });
    expect(r.choices[0].message.content).toBe('The capital of France is Paris.');
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(r.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 7 });
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat');
    expect(sent.body).toEqual({
      model: MODEL,
      message: 'What is the capital of France?',
      preamble: 'Be terse.',
      chat_history: [
        { role: 'USER', message: 'Hi' },
        { role: 'CHATBOT', message: 'Hello!' },
      ],
      p: 0.99,
    });
    await expectCharged(suite, before, billed, MODEL, QUOTA);
  });

  onSqlite(
    'reads the newline-delimited stream for an OpenAI client, charged the stream-end’s billed units',
    async () => {
      const before = await snapshot(suite);
      const { text, usage } = await streamChat(suite, { model: MODEL, messages: ask });
      expect(text).toBe('The capital of France is Paris.');
      expect(usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 7 });
      expect(suite.mock.requests.at(-1)!.body.stream).toBe(true);
      await expectCharged(suite, before, billed, MODEL, QUOTA);
    },
  );

  onSqlite('answers a Claude client, stream and not', async () => {
    const claude = new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });
    let before = await snapshot(suite);
    const m = await claude.messages.create({ model: MODEL, max_tokens: 100, system: 'Be terse.', messages: ask });
    expect(m.content).toEqual([expect.objectContaining({ type: 'text', text: 'The capital of France is Paris.' })]);
    expect(m.usage).toMatchObject({ input_tokens: 7, output_tokens: 7 });
    expect(suite.mock.requests.at(-1)!.body).toMatchObject({ preamble: 'Be terse.', max_tokens: 100 });
    await expectCharged(suite, before, billed, MODEL, QUOTA);

    before = await snapshot(suite);
    const stream = claude.messages.stream({ model: MODEL, max_tokens: 100, messages: ask });
    let text = '';
    stream.on('text', (t) => (text += t));
    await stream.finalMessage();
    expect(text).toBe('The capital of France is Paris.');
    await expectCharged(suite, before, billed, MODEL, QUOTA);
  });

  onSqlite('answers a Gemini client, stream and not', async () => {
    const question = {
      contents: 'What is the capital of France?',
      config: { systemInstruction: 'Be terse.', maxOutputTokens: 100 },
    };
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, MODEL, { ...question, stream: false });
    expect(plain.text).toBe('The capital of France is Paris.');
    expect(plain.usage).toMatchObject({ promptTokenCount: 7, candidatesTokenCount: 7 });
    expect(suite.mock.requests.at(-1)!.body).toMatchObject({
      message: 'What is the capital of France?',
      preamble: 'Be terse.',
      max_tokens: 100,
    });
    await expectCharged(suite, before, billed, MODEL, QUOTA);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { ...question, stream: true });
    expect(streamed.text).toBe('The capital of France is Paris.');
    expect(streamed.usage).toMatchObject({ promptTokenCount: 7, candidatesTokenCount: 7 });
    expect(suite.mock.requests.at(-1)!.body).toMatchObject({ preamble: 'Be terse.', stream: true });
    await expectCharged(suite, before, billed, MODEL, QUOTA);
  });

  onSqlite('refuses a stream in `data:` frames (not Cohere’s framing) as a bad answer, charging nothing', async () => {
    // the mock answers the model `sse-model` with its recorded stream in SSE frames, as an OpenAI-style proxy would
    const before = await snapshot(suite);
    const r = await fetch(`${suite.s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${suite.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sse-model', messages: ask, stream: true }),
    });
    const text = await r.text();
    expect(suite.mock.requests.at(-1)!.body.model).toBe('sse-model');
    expect(r.status).toBe(502);
    expect(text).not.toContain('Paris');
    await expectNothingCharged(suite, before);
  });

  onSqlite('passes rerank to /v1/rerank, charged the locally counted input', async () => {
    const before = await snapshot(suite);
    const r = await relayPost(suite.s, '/v1/rerank', suite.key, {
      model: 'rerank-v3.5',
      query: 'capital of France',
      documents: ['Berlin is in Germany.', 'Paris is the capital of France.'],
      top_n: 2,
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { results: { index: number }[] };
    expect(body.results.map((x) => x.index)).toEqual([1, 0]);
    expect(suite.mock.requests.at(-1)!.path).toBe('/v1/rerank');
    const log = (await logsOf(suite.s, suite.userId)).at(-1)!;
    expect(log.prompt_tokens).toBeGreaterThan(0);
    await expectCharged(suite, before, { prompt: log.prompt_tokens, completion: 0 }, 'rerank-v3.5');
  });

  onSqlite('sends embeddings to /v1/embed, base64 as the SDK asks, charged the billed input tokens', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).embeddings.create({ model: 'embed-english-v3.0', input: 'hello' });
    expect(r.data[0].embedding).toEqual([0.5, -0.25, 0.125]);
    expect(suite.mock.requests.at(-1)!.body).toEqual({
      model: 'embed-english-v3.0',
      texts: ['hello'],
      input_type: 'search_document',
    });
    await expectCharged(suite, before, { prompt: 1, completion: 0 }, 'embed-english-v3.0');
  });

  it('gives the client Cohere’s error and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(suite.s, suite.key)
      .chat.completions.create({ model: 'fail-model', messages: ask })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toContain('model fail-model not found');
    await expectNothingCharged(suite, before);
  });

  onSqlite(
    'refuses an image, or a tool_choice of required (which v1 cannot say), before anything is sent',
    async () => {
      const before = await snapshot(suite);
      const sent = suite.mock.requests.length;
      const image = await client(suite.s, suite.key)
        .chat.completions.create({
          model: MODEL,
          messages: [
            {
              role: 'user',
              content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }],
            },
          ],
        })
        .catch((e: unknown) => e);
      expect((image as APIError).status).toBe(400);
      expect((image as APIError).message).toContain('Cohere 不支持图片输入');
      const tool = await client(suite.s, suite.key)
        .chat.completions.create({
          model: MODEL,
          messages: ask,
          tools: WEATHER,
          tool_choice: 'required',
        })
        .catch((e: unknown) => e);
      expect((tool as APIError).status).toBe(400);
      expect((tool as APIError).message).toContain('tool_choice required');
      expect(suite.mock.requests.length).toBe(sent);
      await expectNothingCharged(suite, before);
    },
  );

  onSqlite(
    'sends tools as parameter_definitions and gives an OpenAI client Cohere’s tool calls, stream and not',
    async () => {
      const openai = client(suite.s, suite.key);
      let before = await snapshot(suite);
      const r = await openai.chat.completions.create({ model: MODEL, messages: weatherAsk, tools: WEATHER });
      const call = r.choices[0].message.tool_calls![0] as { id: string; function: { name: string; arguments: string } };
      expect(r.choices[0].finish_reason).toBe('tool_calls');
      expect([call.function.name, JSON.parse(call.function.arguments)]).toEqual([
        'get_weather',
        { city: 'Paris', unit: 'celsius' },
      ]);
      expect(call.id).toMatch(/^call_/);
      expect(suite.mock.requests.at(-1)!.body.tools).toEqual([
        {
          name: 'get_weather',
          description: 'Current weather for a city',
          parameter_definitions: {
            city: { type: 'str', required: true, description: 'City name' },
            unit: { type: 'str', required: false, description: 'one of: celsius, fahrenheit' },
          },
        },
      ]);
      await expectCharged(suite, before, toolBilled, MODEL, TOOL_QUOTA);

      before = await snapshot(suite);
      const stream = await openai.chat.completions.create({
        model: MODEL,
        messages: weatherAsk,
        tools: WEATHER,
        stream: true,
      });
      let text = '';
      let finish: string | null = null;
      const calls: { name?: string; arguments?: string }[] = [];
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        text += choice.delta.content ?? '';
        for (const t of choice.delta.tool_calls ?? []) {
          calls[t.index] ??= { name: '', arguments: '' };
          calls[t.index].name += t.function?.name ?? '';
          calls[t.index].arguments += t.function?.arguments ?? '';
        }
        finish = choice.finish_reason ?? finish;
      }
      expect(text).toBe('I will look up the current weather in Paris.');
      expect(calls.map((c) => [c.name, JSON.parse(c.arguments!)])).toEqual([
        ['get_weather', { city: 'Paris', unit: 'celsius' }],
      ]);
      expect(finish).toBe('tool_calls');
      await expectCharged(suite, before, toolBilled, MODEL, TOOL_QUOTA);
    },
  );

  onSqlite(
    'sends the tool’s result back as tool_results with an empty message and the call in chat_history',
    async () => {
      const before = await snapshot(suite);
      const r = await client(suite.s, suite.key).chat.completions.create({
        model: MODEL,
        tools: WEATHER,
        messages: [
          ...weatherAsk,
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":18,"sky":"overcast"}' },
        ],
      });
      expect(r.choices[0].message.content).toBe('The capital of France is Paris.');
      const sent = suite.mock.requests.at(-1)!.body;
      expect(sent.message).toBe('');
      expect(sent.chat_history).toEqual([
        { role: 'USER', message: weatherAsk[0].content },
        {
          role: 'CHATBOT',
          message: '',
          tool_calls: [{ name: 'get_weather', parameters: { city: 'Paris', unit: 'celsius' } }],
        },
      ]);
      expect(sent.tool_results).toEqual([
        {
          call: { name: 'get_weather', parameters: { city: 'Paris', unit: 'celsius' } },
          outputs: [{ temperature: 18, sky: 'overcast' }],
        },
      ]);
      await expectCharged(suite, before, billed, MODEL, QUOTA);
    },
  );
});
