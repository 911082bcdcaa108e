// The OpenAI Responses API client (the official `openai` SDK's `responses.create` / `responses.stream`) on every
// provider of the shared world: the OpenAI channel speaks it (native lane), Anthropic, Gemini, Bedrock Claude and
// Vertex AI (Gemini and Claude) do not (translated through the hub to their own format and back). For each: a text
// answer and a stream in OpenAI's event order, each billed to the unit for the usage the client was shown, and a
// function call round trip (the model calls the tool, the function_call_output goes back, a final answer), stream
// and not, on every database.
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { openaiResponsesBehaviour } from './responses-upstreams.js';
import {
  ALL_TARGETS,
  balance,
  callsTo,
  expectBilled,
  familyOf,
  openaiClient,
  resetScripts,
  sentTo,
  startWorld,
  stopWorld,
  TARGETS,
  WEATHER_TOOL,
  type Target,
  type World,
} from './world.js';

const QUESTION = 'What is the weather in Paris?';
const RESULT = '{"temp":"21C"}';
const TOOL = { type: 'function' as const, ...WEATHER_TOOL, strict: false };

/** The usage the client was shown is what the log row charged. */
function expectShownUsageLogged(
  row: { prompt_tokens: number; completion_tokens: number },
  r: OpenAI.Responses.Response,
) {
  expect(r.usage?.input_tokens).toBeGreaterThan(0);
  expect(r.usage?.output_tokens).toBeGreaterThan(0);
  expect([row.prompt_tokens, row.completion_tokens]).toEqual([r.usage!.input_tokens, r.usage!.output_tokens]);
}

/** The next turn as OpenAI's guide builds it: the question, the model's output items as they came, the tool's output.
 * (The SDK's output item types are wider than its input item types, hence the cast.) */
function withToolOutput(input: OpenAI.Responses.ResponseInputItem[], output: unknown[], callId: string) {
  return [
    ...input,
    ...(output as OpenAI.Responses.ResponseInputItem[]),
    { type: 'function_call_output' as const, call_id: callId, output: RESULT },
  ];
}

/** The upstream's last call carried the function call and its output, paired the way its vendor checks. */
function expectResultPaired(w: World, t: Target) {
  const body = sentTo(w, t);
  if (t === 'openai') {
    // native lane: the Responses input items pass through as the client sent them
    const items: any[] = body.input;
    const call = items.find((i) => i.type === 'function_call');
    expect(items.at(-1)).toMatchObject({ type: 'function_call_output', call_id: call.call_id, output: RESULT });
    return;
  }
  switch (familyOf(t)) {
    case 'claude': {
      const [assistant, user] = body.messages.slice(-2);
      const use = assistant.content.find((b: any) => b.type === 'tool_use');
      expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
      expect(user.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: use.id });
      expect(JSON.stringify(user.content[0].content)).toContain('21C');
      break;
    }
    case 'gemini': {
      const [model, user] = body.contents.slice(-2);
      expect(model.parts.find((p: any) => p.functionCall).functionCall).toMatchObject({
        name: 'get_weather',
        args: { city: 'Paris' },
      });
      expect(user.parts[0].functionResponse.name).toBe('get_weather');
      expect(JSON.stringify(user.parts[0].functionResponse.response)).toContain('21C');
      break;
    }
  }
}

await describeEachDb('Responses API client × every provider', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
    // the world's OpenAI channel speaks Chat Completions; here it also answers the Responses API, as OpenAI does
    const chat = w.openai.behave;
    w.openai.behave = (req) => (req.path === '/v1/responses' ? openaiResponsesBehaviour(req) : chat(req));
  });
  afterAll(() => stopWorld(w));
  beforeEach(() => resetScripts(w));

  for (const t of ALL_TARGETS) {
    const model = TARGETS[t];

    it(`${t}: a text answer and a stream in OpenAI's event order, each billed for the usage shown`, async () => {
      const c = openaiClient(w);
      const calls = callsTo(w, t);
      let before = await balance(w);
      const r = await c.responses.create({ model, input: 'Say hello', max_output_tokens: 200 });
      expect(r.object).toBe('response');
      expect(r.status).toBe('completed');
      expect(r.id).toMatch(/^resp_/);
      expect(r.output_text).toMatch(/hello/i);
      expect(callsTo(w, t)).toBe(calls + 1);
      expectShownUsageLogged(await expectBilled(w, model, before), r);

      before = await balance(w);
      const events: string[] = [];
      let text = '';
      const stream = c.responses.stream({ model, input: 'Say hello', max_output_tokens: 200 });
      stream.on('event', (e) => {
        events.push(e.type);
        if (e.type === 'response.output_text.delta') text += e.delta;
      });
      const final = await stream.finalResponse();
      expect(final.status).toBe('completed');
      expect(text).toMatch(/hello/i);
      expect(final.output_text).toBe(text);
      expect(events[0]).toBe('response.created');
      const firstDelta = events.indexOf('response.output_text.delta');
      expect(firstDelta).toBeGreaterThan(0);
      expect(events.indexOf('response.output_item.added')).toBeLessThan(firstDelta);
      expect(events.at(-1)).toBe('response.completed');
      expect(events.filter((e) => e === 'response.completed')).toHaveLength(1);
      const row = await expectBilled(w, model, before);
      expect(!!row.is_stream).toBe(true);
      expectShownUsageLogged(row, final);
    });

    it(`${t}: a function call, its output sent back, a final answer (create)`, async () => {
      const c = openaiClient(w);
      const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: QUESTION }];
      const first = await c.responses.create({ model, input, tools: [TOOL], max_output_tokens: 300 });
      const call = first.output.find((i) => i.type === 'function_call');
      if (call?.type !== 'function_call') throw new Error(`no function call in ${JSON.stringify(first.output)}`);
      expect(call.name).toBe('get_weather');
      expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
      expect(call.call_id).toBeTruthy();

      const before = await balance(w);
      const second = await c.responses.create({
        model,
        input: withToolOutput(input, first.output, call.call_id),
        tools: [TOOL],
        max_output_tokens: 300,
      });
      expect(second.status).toBe('completed');
      expect(second.output.some((i) => i.type === 'function_call')).toBe(false);
      expect(second.output_text).toContain('21C');
      expectResultPaired(w, t);
      expectShownUsageLogged(await expectBilled(w, model, before), second);
    });

    it(`${t}: a function call streamed as argument deltas, its output sent back, a final answer streamed`, async () => {
      const c = openaiClient(w);
      const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: QUESTION }];
      const events: string[] = [];
      let args = '';
      const s1 = c.responses.stream({ model, input, tools: [TOOL], max_output_tokens: 300 });
      s1.on('event', (e) => {
        events.push(e.type);
        if (e.type === 'response.function_call_arguments.delta') args += e.delta;
      });
      const first = await s1.finalResponse();
      expect(events).toContain('response.function_call_arguments.done');
      expect(JSON.parse(args)).toEqual({ city: 'Paris' });
      expect(events.at(-1)).toBe('response.completed');
      const call = first.output.find((i) => i.type === 'function_call');
      if (call?.type !== 'function_call') throw new Error(`no function call in ${JSON.stringify(first.output)}`);
      expect(call.name).toBe('get_weather');
      expect(call.arguments).toBe(args);

      const before = await balance(w);
      const second = await c.responses
        .stream({
          model,
          input: withToolOutput(input, first.output, call.call_id),
          tools: [TOOL],
          max_output_tokens: 300,
        })
        .finalResponse();
      expect(second.status).toBe('completed');
      expect(second.output_text).toContain('21C');
      expectResultPaired(w, t);
      expectShownUsageLogged(await expectBilled(w, model, before), second);
    });
  }
});
