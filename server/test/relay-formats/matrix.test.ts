// Every client format × every provider of the formats work (Anthropic, Gemini, Vertex AI for Claude and Gemini, AWS
// Bedrock, and an OpenAI-compatible channel), with the official SDKs as clients and mocks that validate like the
// vendors: text stream and not, tool calls, and the charge to the unit against the log row, on every database.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { defaultBehaviour, MockUpstream, type RecordedRequest } from '../helpers/mock-upstream.js';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../helpers/mock-anthropic.js';
import { GEMINI_MOCK_KEY, MockGemini } from '../helpers/mock-gemini.js';
import { MockBedrock } from '../helpers/mock-bedrock.js';
import { MockVertex } from '../helpers/mock-vertex.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  flushLogs,
  logsOf,
  setOptions,
  userRow,
} from '../relay/fixtures.js';

/** The model each provider serves, by the provider's name. */
const TARGETS = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-3-5-sonnet-20241022',
  gemini: 'gemini-2.0-flash',
  bedrock: 'claude-3-haiku-20240307',
  'vertex-gemini': 'gemini-2.5-flash',
  'vertex-claude': 'claude-sonnet-4-20250514',
} as const;
type Target = keyof typeof TARGETS;

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** An OpenAI upstream that answers a request with tools by calling the first one, stream or not. */
function openaiWithTools(req: RecordedRequest) {
  const tools = req.body?.tools;
  if (!Array.isArray(tools) || !tools.length) return undefined;
  const call = {
    id: 'call_1',
    type: 'function',
    function: { name: tools[0].function.name, arguments: '{"city":"Paris"}' },
  };
  const usage = { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 };
  if (!req.body.stream)
    return {
      kind: 'json' as const,
      body: {
        id: 'chatcmpl-t',
        object: 'chat.completion',
        created: 1,
        model: req.body.model,
        choices: [
          { index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' },
        ],
        usage,
      },
    };
  const chunk = (delta: unknown, finish: string | null, u?: unknown) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-t', object: 'chat.completion.chunk', created: 1, model: req.body.model, choices: finish === 'usage' ? [] : [{ index: 0, delta, finish_reason: finish }], ...(u ? { usage: u } : {}) })}\n\n`;
  const body =
    chunk(
      {
        role: 'assistant',
        tool_calls: [
          { index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
        ],
      },
      null,
    ) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, null) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, null) +
    chunk({}, 'tool_calls') +
    chunk(null, 'usage', usage) +
    'data: [DONE]\n\n';
  return { kind: 'raw' as const, status: 200, body, contentType: 'text/event-stream' };
}

await describeEachDb('client formats × providers', (kind) => {
  let s: TestServer;
  let openai: MockUpstream;
  let anthropic: MockAnthropic;
  let gemini: MockGemini;
  let bedrock: MockBedrock;
  let vertex: MockVertex;
  let key: string;
  let userId: number;

  beforeAll(async () => {
    [openai, anthropic, gemini, bedrock, vertex] = await Promise.all([
      MockUpstream.start(),
      MockAnthropic.start(),
      MockGemini.start(),
      MockBedrock.start({ accessKeyId: 'AKIDMATRIX', secretAccessKey: 'matrix-secret', region: 'us-east-1' }),
      MockVertex.start(),
    ]);
    openai.behave = (req) => openaiWithTools(req) ?? defaultBehaviour(req);
    // the cloud mocks answer a request that declares tools by calling the first one
    const toolName = (body: any): string | undefined =>
      body?.tools?.[0]?.name ?? body?.tools?.[0]?.functionDeclarations?.[0]?.name;
    bedrock.answer = (req) => {
      const name = toolName(req.body);
      return name
        ? { kind: 'tool_use', name, input: { city: 'Paris' } }
        : { kind: 'text', text: 'Hello from Claude on Bedrock!' };
    };
    vertex.answer = (req) => {
      const name = toolName(req.body);
      if (req.publisher === 'anthropic')
        return {
          kind: 'claude',
          answer: name
            ? { kind: 'tool_use', name, input: { city: 'Paris' } }
            : { kind: 'text', text: 'Hello from Claude on Vertex!' },
        };
      return {
        kind: 'gemini',
        answer: name
          ? { kind: 'function_call', name, args: { city: 'Paris' } }
          : { kind: 'text', text: 'Hello from Gemini on Vertex!' },
      };
    };
    s = await startTestServer({ kind, env: { VERTEX_TOKEN_URL: vertex.tokenUrl } });
    await setOptions(s, { ModelRatio: Object.fromEntries(Object.values(TARGETS).map((m) => [m, 1])) });
    await addChannel(s, { type: 1, baseUrl: openai.url, models: [TARGETS.openai] });
    await addChannel(s, { type: 14, baseUrl: anthropic.url, key: ANTHROPIC_MOCK_KEY, models: [TARGETS.anthropic] });
    await addChannel(s, { type: 24, baseUrl: gemini.url, key: GEMINI_MOCK_KEY, models: [TARGETS.gemini] });
    await addChannel(s, {
      type: 33,
      baseUrl: bedrock.url,
      key: 'AKIDMATRIX|matrix-secret|us-east-1',
      models: [TARGETS.bedrock],
    });
    await addChannel(s, {
      type: 41,
      baseUrl: vertex.url,
      key: vertex.newServiceAccount(),
      other: 'us-central1',
      models: [TARGETS['vertex-gemini'], TARGETS['vertex-claude']],
    });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 100_000_000 });
    userId = u.id;
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([openai?.close(), anthropic?.close(), gemini?.close(), bedrock?.close(), vertex?.close()]);
  });

  /** The balance once every earlier request has settled (settlements are batched). */
  async function balance() {
    await flushLogs(s);
    return (await userRow(s, userId)).quota;
  }

  const claude = () => new Anthropic({ apiKey: `sk-${key}`, baseURL: s.url, maxRetries: 0 });
  const google = () => new GoogleGenAI({ apiKey: `sk-${key}`, httpOptions: { baseUrl: s.url } });

  /** The last consume log's charge matches its tokens and ratios, and the user's balance moved by exactly that. */
  async function expectBilled(model: string, before: number) {
    const logs = await logsOf(s, userId);
    const row = logs.at(-1)!;
    expect(row.model_name).toBe(model);
    expect(row.prompt_tokens).toBeGreaterThan(0);
    expect(row.completion_tokens).toBeGreaterThan(0);
    const o = row.otherJson;
    const cached = Number(o.cache_tokens ?? 0);
    const creation = Number(o.cache_creation_tokens ?? 0);
    const tokens =
      row.prompt_tokens -
      cached +
      cached * o.cache_ratio +
      creation * (o.cache_creation_ratio ?? 0) +
      row.completion_tokens * o.completion_ratio;
    const raw = tokens * o.model_ratio * o.group_ratio;
    expect(Math.abs(row.quota - raw)).toBeLessThanOrEqual(1);
    expect(before - (await userRow(s, userId)).quota).toBe(row.quota);
    if (model.startsWith('claude')) expect(o.claude).toBe(true);
    return row;
  }

  const targets = Object.keys(TARGETS) as Target[];

  for (const t of targets) {
    const model = TARGETS[t];

    it(`OpenAI client → ${t}: answer, stream, tool call, billed`, async () => {
      const c = client(s, key);
      let before = await balance();
      const r = await c.chat.completions.create({
        model,
        max_tokens: 200,
        messages: [{ role: 'user', content: 'Say hello' }],
      });
      expect(r.choices[0].message.content).toMatch(/hello/i);
      await expectBilled(model, before);

      before = await balance();
      const stream = await c.chat.completions.create({
        model,
        max_tokens: 200,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Say hello' }],
      });
      let text = '';
      let usage = 0;
      for await (const ch of stream) {
        text += ch.choices[0]?.delta?.content ?? '';
        if (ch.usage) usage = ch.usage.total_tokens;
      }
      expect(text).toMatch(/hello/i);
      expect(usage).toBeGreaterThan(0);
      await expectBilled(model, before);

      const tool = await c.chat.completions.create({
        model,
        max_tokens: 200,
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
        tools: [{ type: 'function', function: WEATHER_TOOL }],
      });
      const call = tool.choices[0].message.tool_calls?.[0];
      expect(call?.type === 'function' && call.function.name).toBe('get_weather');
      expect(tool.choices[0].finish_reason).toBe('tool_calls');
    });

    it(`Anthropic client → ${t}: answer, stream, tool call, billed`, async () => {
      const c = claude();
      let before = await balance();
      const r = await c.messages.create({ model, max_tokens: 200, messages: [{ role: 'user', content: 'Say hello' }] });
      expect(r.type).toBe('message');
      expect(r.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toMatch(/hello/i);
      expect(r.usage.output_tokens).toBeGreaterThan(0);
      await expectBilled(model, before);

      before = await balance();
      const final = await c.messages
        .stream({ model, max_tokens: 200, messages: [{ role: 'user', content: 'Say hello' }] })
        .finalMessage();
      expect(final.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toMatch(/hello/i);
      await expectBilled(model, before);

      const tool = await c.messages.create({
        model,
        max_tokens: 200,
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
        tools: [
          {
            name: WEATHER_TOOL.name,
            description: WEATHER_TOOL.description,
            input_schema: WEATHER_TOOL.parameters as any,
          },
        ],
      });
      expect(tool.stop_reason).toBe('tool_use');
      const use = tool.content.find((b) => b.type === 'tool_use');
      expect(use?.type === 'tool_use' && use.name).toBe('get_weather');
    });

    it(`Gemini client → ${t}: answer, stream, function call, billed`, async () => {
      const g = google();
      let before = await balance();
      const r = await g.models.generateContent({ model, contents: 'Say hello', config: { maxOutputTokens: 200 } });
      expect(r.text).toMatch(/hello/i);
      expect(r.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
      await expectBilled(model, before);

      before = await balance();
      let text = '';
      for await (const ch of await g.models.generateContentStream({
        model,
        contents: 'Say hello',
        config: { maxOutputTokens: 200 },
      }))
        text += ch.text ?? '';
      expect(text).toMatch(/hello/i);
      await expectBilled(model, before);

      const tool = await g.models.generateContent({
        model,
        contents: 'What is the weather in Paris?',
        config: { maxOutputTokens: 200, tools: [{ functionDeclarations: [WEATHER_TOOL as any] }] },
      });
      expect(tool.functionCalls?.[0]?.name).toBe('get_weather');
    });
  }

  it('errors come back in each client format', async () => {
    const bad = await fetch(`${s.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk-wrong', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });

    const g = await fetch(`${s.url}/v1beta/models/${TARGETS.gemini}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': `sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [] }),
    });
    expect(g.status).toBe(400);
    expect(await g.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });

    const unknown = await fetch(`${s.url}/v1beta/nothing-here`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/json/);
  });

  it('refuses embeddings on a Vertex AI channel with a 400 in the client format, sending nothing, charging nothing', async () => {
    const calls = vertex.requests.length;
    await flushLogs(s);
    const before = await balance();
    const res = await fetch(`${s.url}/v1beta/models/${TARGETS['vertex-gemini']}:embedContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': `sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: { parts: [{ text: 'embed me' }] } }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    expect(vertex.requests.length).toBe(calls);
    expect(await balance()).toBe(before);
  });
});
