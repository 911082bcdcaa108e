// Tools both ways, for every client format × provider: a system prompt and a tool definition reach the upstream in
// its own shape, the tool call streams back to the client as deltas, and the second turn (the call and its result)
// reaches the upstream paired the way the vendor checks it (OpenAI `tool` message with the call's id, Claude
// `tool_result` with the tool_use id, Gemini `functionResponse` with the function's name), ending in a final answer.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import {
  ALL_TARGETS,
  balance,
  claudeClient,
  expectBilled,
  familyOf,
  googleClient,
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

const SYSTEM = 'You are a terse weather assistant.';
const QUESTION = 'What is the weather in Paris?';
const RESULT = '{"temp":"21C"}';

/** The upstream got the system prompt and the weather tool in its own shape. */
function expectSystemAndTool(w: World, t: Target) {
  const body = sentTo(w, t);
  switch (familyOf(t)) {
    case 'openai':
      expect(body.messages[0]).toEqual({ role: 'system', content: SYSTEM });
      expect(body.tools[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
      break;
    case 'claude': {
      const system = typeof body.system === 'string' ? body.system : body.system.map((b: any) => b.text).join('');
      expect(system).toBe(SYSTEM);
      expect(body.messages.some((m: any) => m.role === 'system')).toBe(false);
      expect(body.tools[0]).toMatchObject({ name: 'get_weather', input_schema: WEATHER_TOOL.parameters });
      break;
    }
    case 'gemini':
      expect(body.systemInstruction.parts).toEqual([{ text: SYSTEM }]);
      expect(body.contents.every((c: any) => c.role !== 'system')).toBe(true);
      expect(body.tools[0].functionDeclarations[0]).toMatchObject({ name: 'get_weather' });
      break;
  }
}

/** The upstream got the second turn: the call, then its result paired with it. */
function expectToolResult(w: World, t: Target) {
  const body = sentTo(w, t);
  switch (familyOf(t)) {
    case 'openai': {
      const assistant = body.messages.find((m: any) => m.role === 'assistant');
      const tool = body.messages.at(-1);
      expect(assistant.tool_calls[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
      expect(JSON.parse(assistant.tool_calls[0].function.arguments)).toEqual({ city: 'Paris' });
      expect(tool).toMatchObject({ role: 'tool', tool_call_id: assistant.tool_calls[0].id });
      expect(JSON.stringify(tool.content)).toContain('21C');
      break;
    }
    case 'claude': {
      const [assistant, user] = body.messages.slice(-2);
      const use = assistant.content.find((b: any) => b.type === 'tool_use');
      expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
      expect(user.role).toBe('user');
      expect(user.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: use.id });
      expect(JSON.stringify(user.content[0].content)).toContain('21C');
      break;
    }
    case 'gemini': {
      const [model, user] = body.contents.slice(-2);
      expect(model.role).toBe('model');
      expect(model.parts.find((p: any) => p.functionCall).functionCall).toMatchObject({
        name: 'get_weather',
        args: { city: 'Paris' },
      });
      expect(user.role).toBe('user');
      expect(user.parts[0].functionResponse).toMatchObject({ name: 'get_weather', response: { temp: '21C' } });
      break;
    }
  }
}

/** The upstream got two calls and their two results, paired in order (Paris first, then Rome). */
function expectTwoResults(w: World, t: Target) {
  const body = sentTo(w, t);
  switch (familyOf(t)) {
    case 'openai': {
      const assistant = body.messages.find((m: any) => m.role === 'assistant');
      const tools = body.messages.filter((m: any) => m.role === 'tool');
      expect(assistant.tool_calls.map((c: any) => JSON.parse(c.function.arguments).city)).toEqual(['Paris', 'Rome']);
      expect(tools.map((m: any) => m.tool_call_id)).toEqual(assistant.tool_calls.map((c: any) => c.id));
      expect(new Set(tools.map((m: any) => m.tool_call_id)).size).toBe(2);
      expect(JSON.stringify(tools[0].content)).toContain('21C');
      expect(JSON.stringify(tools[1].content)).toContain('25C');
      break;
    }
    case 'claude': {
      const [assistant, user] = body.messages.slice(-2);
      const uses = assistant.content.filter((b: any) => b.type === 'tool_use');
      expect(uses.map((b: any) => b.input.city)).toEqual(['Paris', 'Rome']);
      const results = user.content.filter((b: any) => b.type === 'tool_result');
      expect(results.map((b: any) => b.tool_use_id)).toEqual(uses.map((b: any) => b.id));
      expect(new Set(uses.map((b: any) => b.id)).size).toBe(2);
      expect(JSON.stringify(results[0].content)).toContain('21C');
      expect(JSON.stringify(results[1].content)).toContain('25C');
      break;
    }
    case 'gemini': {
      const [model, user] = body.contents.slice(-2);
      expect(model.parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall.args.city)).toEqual([
        'Paris',
        'Rome',
      ]);
      const responses = user.parts.filter((p: any) => p.functionResponse).map((p: any) => p.functionResponse);
      expect(responses.map((r: any) => [r.name, r.response.temp])).toEqual([
        ['get_weather', '21C'],
        ['get_weather', '25C'],
      ]);
      break;
    }
  }
}

await describeEachDb('tools both ways, every client format × provider', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
  });
  afterAll(() => stopWorld(w));
  beforeEach(() => resetScripts(w));

  for (const t of ALL_TARGETS) {
    const model = TARGETS[t];

    it(`OpenAI client → ${t}: system + tools, streamed call deltas, tool result, final answer`, async () => {
      const c = openaiClient(w);
      const stream = await c.chat.completions.create({
        model,
        max_tokens: 200,
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: QUESTION },
        ],
        tools: [{ type: 'function', function: WEATHER_TOOL }],
      });
      let id = '';
      let name = '';
      let args = '';
      let finish: string | null = null;
      for await (const ch of stream) {
        for (const tc of ch.choices[0]?.delta?.tool_calls ?? []) {
          expect(tc.index).toBe(0);
          id ||= tc.id ?? '';
          name ||= tc.function?.name ?? '';
          args += tc.function?.arguments ?? '';
        }
        finish = ch.choices[0]?.finish_reason ?? finish;
      }
      expect(id).not.toBe('');
      expect(name).toBe('get_weather');
      expect(JSON.parse(args)).toEqual({ city: 'Paris' });
      expect(finish).toBe('tool_calls');
      expectSystemAndTool(w, t);

      const before = await balance(w);
      const r = await c.chat.completions.create({
        model,
        max_tokens: 200,
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: QUESTION },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
          },
          { role: 'tool', tool_call_id: id, content: RESULT },
        ],
        tools: [{ type: 'function', function: WEATHER_TOOL }],
      });
      expect(r.choices[0].message.content).toContain('21C');
      expect(r.choices[0].finish_reason).toBe('stop');
      expectToolResult(w, t);
      await expectBilled(w, model, before);
    });

    it(`Anthropic client → ${t}: system + tools, streamed input_json deltas, tool_result, final answer`, async () => {
      const c = claudeClient(w);
      const tools = [
        {
          name: WEATHER_TOOL.name,
          description: WEATHER_TOOL.description,
          input_schema: WEATHER_TOOL.parameters as any,
        },
      ];
      const stream = c.messages.stream({
        model,
        max_tokens: 200,
        system: SYSTEM,
        messages: [{ role: 'user', content: QUESTION }],
        tools,
      });
      let jsonDeltas = 0;
      for await (const ev of stream)
        if (ev.type === 'content_block_delta' && ev.delta.type === 'input_json_delta') jsonDeltas++;
      const first = await stream.finalMessage();
      expect(jsonDeltas).toBeGreaterThan(0);
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((b) => b.type === 'tool_use');
      expect(use?.type === 'tool_use' && use.name).toBe('get_weather');
      expect(use?.type === 'tool_use' && use.input).toEqual({ city: 'Paris' });
      expect(use?.type === 'tool_use' && use.id).toBeTruthy();
      expectSystemAndTool(w, t);

      const before = await balance(w);
      const r = await c.messages.create({
        model,
        max_tokens: 200,
        system: SYSTEM,
        tools,
        messages: [
          { role: 'user', content: QUESTION },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: (use as any).id, content: RESULT }] },
        ],
      });
      expect(r.stop_reason).toBe('end_turn');
      expect(r.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toContain('21C');
      expectToolResult(w, t);
      await expectBilled(w, model, before);
    });

    it(`Gemini client → ${t}: systemInstruction + tools, streamed functionCall, functionResponse, final answer`, async () => {
      const g = googleClient(w);
      const config = {
        maxOutputTokens: 200,
        systemInstruction: SYSTEM,
        // a copy: the SDK rewrites a declaration's schema in place (types in capitals)
        tools: [{ functionDeclarations: [structuredClone(WEATHER_TOOL) as any] }],
      };
      const modelParts: any[] = [];
      for await (const ch of await g.models.generateContentStream({ model, contents: QUESTION, config }))
        for (const p of ch.candidates?.[0]?.content?.parts ?? []) if (!p.thought) modelParts.push(p);
      const call = modelParts.find((p) => p.functionCall)?.functionCall;
      expect(call).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
      expectSystemAndTool(w, t);

      const before = await balance(w);
      const r = await g.models.generateContent({
        model,
        config,
        contents: [
          { role: 'user', parts: [{ text: QUESTION }] },
          { role: 'model', parts: modelParts },
          { role: 'user', parts: [{ functionResponse: { name: call.name, id: call.id, response: { temp: '21C' } } }] },
        ],
      });
      expect(r.text).toContain('21C');
      expect(r.candidates?.[0]?.finishReason).toBe('STOP');
      expectToolResult(w, t);
      await expectBilled(w, model, before);
    });

    it(`OpenAI client → ${t}: two parallel calls and their two tool messages`, async () => {
      const calls = [
        { id: 'call_a', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_b', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
      ];
      const r = await openaiClient(w).chat.completions.create({
        model,
        max_tokens: 200,
        tools: [{ type: 'function', function: WEATHER_TOOL }],
        messages: [
          { role: 'user', content: 'The weather in Paris and Rome?' },
          { role: 'assistant', content: null, tool_calls: calls },
          { role: 'tool', tool_call_id: 'call_a', content: '{"temp":"21C"}' },
          { role: 'tool', tool_call_id: 'call_b', content: '{"temp":"25C"}' },
        ],
      });
      expect(r.choices[0].finish_reason).toBe('stop');
      expectTwoResults(w, t);
    });

    it(`Anthropic client → ${t}: two parallel tool_use blocks and their two tool_result blocks`, async () => {
      const r = await claudeClient(w).messages.create({
        model,
        max_tokens: 200,
        tools: [
          {
            name: WEATHER_TOOL.name,
            description: WEATHER_TOOL.description,
            input_schema: WEATHER_TOOL.parameters as any,
          },
        ],
        messages: [
          { role: 'user', content: 'The weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'Rome' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_01A', content: '{"temp":"21C"}' },
              { type: 'tool_result', tool_use_id: 'toolu_01B', content: '{"temp":"25C"}' },
            ],
          },
        ],
      });
      expect(r.stop_reason).toBe('end_turn');
      expectTwoResults(w, t);
    });

    it(`Gemini client → ${t}: two parallel functionCalls and their two functionResponses`, async () => {
      const r = await googleClient(w).models.generateContent({
        model,
        config: { maxOutputTokens: 200, tools: [{ functionDeclarations: [structuredClone(WEATHER_TOOL) as any] }] },
        contents: [
          { role: 'user', parts: [{ text: 'The weather in Paris and Rome?' }] },
          {
            role: 'model',
            parts: [
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
              { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { name: 'get_weather', response: { temp: '21C' } } },
              { functionResponse: { name: 'get_weather', response: { temp: '25C' } } },
            ],
          },
        ],
      });
      expect(r.candidates?.[0]?.finishReason).toBe('STOP');
      expectTwoResults(w, t);
    });
  }
});
