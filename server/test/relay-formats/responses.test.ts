// The OpenAI Responses API (POST /v1/responses) with the official `openai` client, on every database, against three
// kinds of channel: OpenAI, which speaks it (native lane: the body and the answer's bytes pass through), and DeepSeek
// and Anthropic, which do not (translated lane: Responses → hub → Chat Completions or Messages, and the answer back
// as a `response` object or typed events). Text, stream, a function call round trip, reasoning, the 400s for what
// only OpenAI can do (hosted tools, previous_response_id) and the charge to the unit against the log row.
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { azureAdaptor } from '../../src/relay/providers/azure/index.js';
import { responsesMode } from '../../src/relay/modes/responses.js';
import type { RelayInfo } from '../../src/relay/providers/types.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../helpers/mock-anthropic.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  flushLogs,
  logsOf,
  relayPost,
  setOptions,
  userRow,
} from '../relay/fixtures.js';
import {
  DEEPSEEK_REASONING,
  OPENAI_USAGE,
  deepseekBehaviour,
  openaiResponsesBehaviour,
} from './responses-upstreams.js';

const MODELS = {
  openai: 'gpt-4o-mini',
  deepseek: 'deepseek-chat',
  reasoner: 'deepseek-reasoner',
  anthropic: 'claude-sonnet-4-20250514',
  azure: 'gpt-4.1-mini',
} as const;

const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

await describeEachDb('Responses API clients × channels', (kind) => {
  let s: TestServer;
  let openai: MockUpstream;
  let deepseek: MockUpstream;
  /** a second DeepSeek channel for deepseek-chat, lower priority: where a retry would go */
  let deepseekSpare: MockUpstream;
  let anthropic: MockAnthropic;
  /** Azure OpenAI: the same Responses API on its own route */
  let azure: MockUpstream;
  let key: string;
  let userId: number;
  const channelIds: number[] = [];

  beforeAll(async () => {
    [openai, deepseek, deepseekSpare, anthropic, azure] = await Promise.all([
      MockUpstream.start(),
      MockUpstream.start(),
      MockUpstream.start(),
      MockAnthropic.start(),
      MockUpstream.start(),
    ]);
    openai.behave = openaiResponsesBehaviour;
    deepseek.behave = deepseekBehaviour;
    deepseekSpare.behave = deepseekBehaviour;
    azure.behave = (req) =>
      req.path === '/openai/v1/responses?api-version=preview'
        ? openaiResponsesBehaviour({ ...req, path: '/v1/responses' })
        : { kind: 'json', status: 404, body: { error: { code: '404', message: 'Resource not found' } } };
    s = await startTestServer({ kind });
    await setOptions(s, {
      ModelRatio: Object.fromEntries(Object.values(MODELS).map((m) => [m, 1.5])),
      CompletionRatio: Object.fromEntries(Object.values(MODELS).map((m) => [m, 4])),
      RetryTimes: 3,
    });
    channelIds.push(
      await addChannel(s, { type: 1, baseUrl: openai.url, models: [MODELS.openai] }),
      await addChannel(s, { type: 43, baseUrl: deepseek.url, models: [MODELS.deepseek, MODELS.reasoner] }),
      await addChannel(s, { type: 43, baseUrl: deepseekSpare.url, models: [MODELS.deepseek], priority: -1 }),
      await addChannel(s, { type: 14, baseUrl: anthropic.url, key: ANTHROPIC_MOCK_KEY, models: [MODELS.anthropic] }),
      await addChannel(s, { type: 3, baseUrl: azure.url, key: 'az-key', other: '2024-10-21', models: [MODELS.azure] }),
    );
    await channelsChanged(s);
    const u = await addUser(s, { quota: 100_000_000 });
    userId = u.id;
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([openai?.close(), deepseek?.close(), deepseekSpare?.close(), anthropic?.close(), azure?.close()]);
  });

  /** The balance once every earlier request has settled (settlements are batched). */
  async function balance() {
    await flushLogs(s);
    return (await userRow(s, userId)).quota;
  }

  /** The last consume log's charge matches its tokens and ratios, and the user's balance moved by exactly that. */
  async function expectBilled(model: string, before: number, stream: boolean) {
    const logs = await logsOf(s, userId);
    const row = logs.at(-1)!;
    expect(row.model_name).toBe(model);
    expect(!!row.is_stream).toBe(stream);
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

  const sdk = (): OpenAI => client(s, key);

  // ---- native lane: OpenAI speaks the Responses API

  it('OpenAI channel: the request and the answer pass through byte for byte, billed from response.usage', async () => {
    openai.requests.length = 0;
    let before = await balance();
    const body = { model: MODELS.openai, input: 'Say hello', instructions: 'Be brief.' };
    const res = await relayPost(s, '/v1/responses', key, body);
    expect(res.status).toBe(200);
    const raw = await res.text();
    const sent = openai.requests[0];
    expect(sent.path).toBe('/v1/responses');
    expect(sent.body).toEqual(body);
    const expected = openaiResponsesBehaviour(sent);
    expect(expected.kind === 'json' && raw).toBe(expected.kind === 'json' && JSON.stringify(expected.body));
    const row = await expectBilled(MODELS.openai, before, false);
    expect([row.prompt_tokens, row.completion_tokens]).toEqual([OPENAI_USAGE.input_tokens, OPENAI_USAGE.output_tokens]);

    before = await balance();
    const streamed = await relayPost(s, '/v1/responses', key, { ...body, stream: true });
    const events = await streamed.text();
    const upstream = openaiResponsesBehaviour(openai.requests[1]);
    expect(upstream.kind === 'raw' && events).toBe(upstream.kind === 'raw' && upstream.body);
    expect(events).not.toContain('[DONE]');
    await expectBilled(MODELS.openai, before, true);
  });

  it('OpenAI channel: hosted tools and previous_response_id are the upstream’s business, passed on as they are', async () => {
    openai.requests.length = 0;
    const r = await sdk().responses.create({
      model: MODELS.openai,
      input: 'What happened today?',
      tools: [{ type: 'web_search' }],
      previous_response_id: 'resp_earlier',
    });
    expect(r.status).toBe('completed');
    expect(openai.requests[0].body.tools).toEqual([{ type: 'web_search' }]);
    expect(openai.requests[0].body.previous_response_id).toBe('resp_earlier');
  });

  it('Azure channel: native on the v1 route, the deployment named by the body’s model', async () => {
    azure.requests.length = 0;
    const before = await balance();
    const r = await sdk().responses.create({
      model: MODELS.azure,
      input: 'Say hello',
      tools: [{ type: 'web_search' }],
    });
    expect(r.output_text).toMatch(/hello/i);
    const sent = azure.requests[0];
    expect(sent.path).toBe('/openai/v1/responses?api-version=preview');
    expect(sent.headers['api-key']).toBe('az-key');
    expect(sent.body).toMatchObject({ model: MODELS.azure, tools: [{ type: 'web_search' }] });
    await expectBilled(MODELS.azure, before, false);
  });

  // ---- every channel: text, stream, a function call round trip

  const TARGETS = [
    { name: 'OpenAI (native)', model: MODELS.openai, upstreamPath: '/v1/responses' },
    { name: 'DeepSeek (through the hub)', model: MODELS.deepseek, upstreamPath: '/v1/chat/completions' },
    { name: 'Anthropic (through the hub)', model: MODELS.anthropic, upstreamPath: '/v1/messages' },
  ];
  const requestsOf = (model: string) =>
    model === MODELS.openai ? openai.requests : model === MODELS.anthropic ? anthropic.requests : deepseek.requests;

  for (const t of TARGETS) {
    it(`${t.name}: create and stream a text answer, billed`, async () => {
      const c = sdk();
      requestsOf(t.model).length = 0;
      let before = await balance();
      const r = await c.responses.create({ model: t.model, input: 'Say hello', max_output_tokens: 200 });
      expect(r.object).toBe('response');
      expect(r.status).toBe('completed');
      expect(r.id).toMatch(/^resp_/);
      expect(r.output_text).toMatch(/hello/i);
      expect(r.usage?.input_tokens).toBeGreaterThan(0);
      expect(r.usage?.output_tokens).toBeGreaterThan(0);
      expect(requestsOf(t.model)[0].path.split('?')[0]).toBe(t.upstreamPath);
      const row = await expectBilled(t.model, before, false);
      // the charge is the usage the client was shown
      expect(row.prompt_tokens).toBe(r.usage!.input_tokens);
      expect(row.completion_tokens).toBe(r.usage!.output_tokens);

      before = await balance();
      const events: string[] = [];
      const stream = c.responses.stream({ model: t.model, input: 'Say hello', max_output_tokens: 200 });
      stream.on('event', (e) => events.push(e.type));
      const final = await stream.finalResponse();
      expect(final.status).toBe('completed');
      expect(final.output_text).toMatch(/hello/i);
      expect(events[0]).toBe('response.created');
      expect(events).toContain('response.output_text.delta');
      expect(events.at(-1)).toBe('response.completed');
      const streamed = await expectBilled(t.model, before, true);
      expect(streamed.prompt_tokens).toBe(final.usage!.input_tokens);
      expect(streamed.completion_tokens).toBe(final.usage!.output_tokens);
    });

    it(`${t.name}: a function call and its output sent back`, async () => {
      const c = sdk();
      requestsOf(t.model).length = 0;
      const input: any[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
      const first = await c.responses.create({ model: t.model, input, tools: [WEATHER_TOOL], max_output_tokens: 300 });
      const call = first.output.find((i) => i.type === 'function_call');
      expect(call?.type === 'function_call' && call.name).toBe('get_weather');
      expect(call?.type === 'function_call' && JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
      expect(call?.type === 'function_call' && call.call_id).toBeTruthy();

      const before = await balance();
      const second = await c.responses
        .stream({
          model: t.model,
          input: [
            ...input,
            ...first.output,
            {
              type: 'function_call_output',
              call_id: call!.type === 'function_call' ? call!.call_id : '',
              output: '21C',
            },
          ],
          tools: [WEATHER_TOOL],
          max_output_tokens: 300,
        })
        .finalResponse();
      expect(second.output_text).toMatch(/21C/);
      await expectBilled(t.model, before, true);
      // the provider saw the tool result paired with its call
      const sent = requestsOf(t.model).at(-1)!.body;
      if (t.model === MODELS.deepseek) {
        const tool = sent.messages.at(-1);
        expect(tool).toMatchObject({ role: 'tool', content: '21C' });
        expect(sent.messages.at(-2).tool_calls[0].id).toBe(tool.tool_call_id);
      }
      if (t.model === MODELS.anthropic) {
        const result = sent.messages.at(-1).content[0];
        expect(result).toMatchObject({ type: 'tool_result' });
        expect(
          sent.messages.at(-2).content.some((b: any) => b.type === 'tool_use' && b.id === result.tool_use_id),
        ).toBe(true);
      }
    });
  }

  // ---- reasoning from providers that give it

  it('DeepSeek reasoner: reasoning_content comes back as a reasoning item, stream or not', async () => {
    const c = sdk();
    const before = await balance();
    const r = await c.responses.create({ model: MODELS.reasoner, input: 'Say hello' });
    expect(r.output[0].type).toBe('reasoning');
    expect(r.output[0].type === 'reasoning' && r.output[0].summary[0]?.text).toBe(DEEPSEEK_REASONING);
    expect(r.output_text).toMatch(/hello/i);
    expect(r.usage?.output_tokens_details.reasoning_tokens).toBe(11);
    await expectBilled(MODELS.reasoner, before, false);

    const events: string[] = [];
    const stream = c.responses.stream({ model: MODELS.reasoner, input: 'Say hello' });
    stream.on('event', (e) => events.push(e.type));
    const final = await stream.finalResponse();
    expect(final.output[0].type === 'reasoning' && final.output[0].summary[0]?.text).toBe(DEEPSEEK_REASONING);
    expect(events).toContain('response.reasoning_summary_text.delta');
    expect(events.indexOf('response.reasoning_summary_text.delta')).toBeLessThan(
      events.indexOf('response.output_text.delta'),
    );
  });

  it('Anthropic: reasoning.effort turns thinking on, and the thinking comes back as a reasoning item', async () => {
    const c = sdk();
    anthropic.requests.length = 0;
    const before = await balance();
    const r = await c.responses.create({
      model: MODELS.anthropic,
      input: 'Say hello',
      reasoning: { effort: 'low' },
      max_output_tokens: 4000,
    });
    expect(anthropic.requests[0].body.thinking).toMatchObject({ type: 'enabled' });
    expect(r.output[0].type === 'reasoning' && r.output[0].summary[0]?.text).toMatch(/^Thinking about/);
    expect(r.output_text).toMatch(/hello/i);
    await expectBilled(MODELS.anthropic, before, false);

    const final = await c.responses
      .stream({ model: MODELS.anthropic, input: 'Say hello', reasoning: { effort: 'low' }, max_output_tokens: 4000 })
      .finalResponse();
    expect(final.output[0].type === 'reasoning' && final.output[0].summary[0]?.text).toMatch(/^Thinking about/);
    expect(final.output_text).toMatch(/hello/i);
  });

  // ---- a model that refuses

  it('Anthropic refusal: an incomplete response with content_filter, whole and streamed, still billed', async () => {
    const c = sdk();
    anthropic.behave = () => ({
      kind: 'answer',
      content: [{ type: 'text', text: 'I can’t help with that.' }],
      stop_reason: 'refusal',
    });
    try {
      const before = await balance();
      const r = await c.responses.create({
        model: MODELS.anthropic,
        input: 'Something harmful',
        max_output_tokens: 200,
      });
      expect(r.status).toBe('incomplete');
      expect(r.incomplete_details).toEqual({ reason: 'content_filter' });
      expect(r.output_text).toBe('I can’t help with that.');
      await expectBilled(MODELS.anthropic, before, false);

      const events: string[] = [];
      const stream = c.responses.stream({
        model: MODELS.anthropic,
        input: 'Something harmful',
        max_output_tokens: 200,
      });
      stream.on('event', (e) => events.push(e.type));
      const final = await stream.finalResponse();
      expect(events.at(-1)).toBe('response.incomplete');
      expect(final.status).toBe('incomplete');
      expect(final.incomplete_details).toEqual({ reason: 'content_filter' });
    } finally {
      anthropic.behave = () => ({ kind: 'default' });
    }
  });

  // ---- requests refused on the translated lane

  async function channelStatuses() {
    const rows = await s.ctx.db.selectFrom('channels').select(['id', 'status']).execute();
    return rows.filter((r) => channelIds.includes(r.id)).map((r) => r.status);
  }

  it('what only OpenAI can do is a 400 in OpenAI’s shape on a translated lane: no retry, no charge, no disable', async () => {
    const cases: { model: string; body: Record<string, unknown>; param: string; says: RegExp }[] = [
      {
        model: MODELS.deepseek,
        body: { input: 'What happened today?', tools: [{ type: 'web_search' }] },
        param: 'tools[0]',
        says: /web_search/,
      },
      {
        model: MODELS.deepseek,
        body: { input: 'Find it', tools: [WEATHER_TOOL, { type: 'file_search', vector_store_ids: ['vs_1'] }] },
        param: 'tools[1]',
        says: /file_search/,
      },
      {
        model: MODELS.anthropic,
        body: { input: 'And then?', previous_response_id: 'resp_earlier' },
        param: 'previous_response_id',
        says: /previous_response_id/,
      },
      {
        model: MODELS.anthropic,
        body: { input: 'And then?', previous_response_id: 'resp_earlier', stream: true },
        param: 'previous_response_id',
        says: /previous_response_id/,
      },
    ];
    for (const c of cases) {
      for (const m of [deepseek, deepseekSpare]) m.requests.length = 0;
      anthropic.requests.length = 0;
      const before = await balance();
      const logsBefore = (await logsOf(s, userId)).length;
      const res = await relayPost(s, '/v1/responses', key, { model: c.model, ...c.body });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const j = (await res.json()) as any;
      expect(j.error.type).toBe('invalid_request_error');
      expect(j.error.param).toBe(c.param);
      expect(j.error.message).toMatch(c.says);
      expect(j.error.message).toMatch(/\(request id: .+\)$/);
      // refused before any upstream was asked, the spare channel included, and nothing charged or logged
      expect(deepseek.requests.length + deepseekSpare.requests.length + anthropic.requests.length).toBe(0);
      expect(await balance()).toBe(before);
      expect((await logsOf(s, userId)).length).toBe(logsBefore);
    }
    await expect(
      sdk().responses.create({ model: MODELS.deepseek, input: 'Hi', tools: [{ type: 'web_search' }] }),
    ).rejects.toMatchObject({ status: 400, type: 'invalid_request_error', param: 'tools[0]' });
    expect(await channelStatuses()).toEqual([1, 1, 1, 1, 1]);
  });
});

describe('Azure routes for the Responses API', () => {
  const info = (baseUrl: string, other = ''): RelayInfo =>
    ({
      settings: { azureDefaultApiVersion: '2025-04-01-preview' },
      channel: { type: 3, key: 'k', baseUrl, other, organization: '' },
      mode: responsesMode,
      originModel: 'gpt-4.1',
      upstreamModel: 'gpt-4.1',
      isStream: false,
      clientFormat: 'responses',
      clientHeaders: {},
    }) as unknown as RelayInfo;

  it('openai.azure.com resources: the v1 route, api-version preview, no deployment segment', () => {
    expect(azureAdaptor.target(info('https://res.openai.azure.com', '2024-10-21'))).toEqual({
      origin: 'https://res.openai.azure.com',
      path: '/openai/v1/responses?api-version=preview',
    });
  });

  it('cognitiveservices.azure.com resources: /openai/responses with the channel’s (or the default) api-version', () => {
    expect(azureAdaptor.target(info('https://res.cognitiveservices.azure.com', '2025-04-01-preview')).path).toBe(
      '/openai/responses?api-version=2025-04-01-preview',
    );
    expect(azureAdaptor.target(info('https://res.cognitiveservices.azure.com')).path).toBe(
      '/openai/responses?api-version=2025-04-01-preview',
    );
  });
});
