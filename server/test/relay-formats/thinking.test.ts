// Thinking across formats, for every client format × provider: the client asks for it in its own words (OpenAI
// reasoning_effort, Claude `thinking`, Gemini `thinkingConfig`), the upstream is asked in its own, and the reasoning
// comes back in the client's shape (OpenAI reasoning_content, Claude thinking blocks with a signature, Gemini
// `thought` parts), whole and streamed. A Claude client's second turn sends its signed thinking block back with the
// tool result; a Claude upstream must get it unchanged (the mocks refuse an altered or unsigned block).
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { mockSignature } from '../helpers/mock-anthropic-rules.js';
import {
  ALL_TARGETS,
  claudeClient,
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

/** The OpenAI-compatible upstream is a reasoning model (DeepSeek style): it always answers with reasoning_content. */
function reasoningOpenai(w: World) {
  const reasoning = 'Thinking about the question';
  w.scriptOpenai = (body) => {
    if (body.messages.at(-1)?.role === 'tool') return undefined;
    if (body.tools?.length)
      return { reasoning, toolCall: { id: 'call_r1', name: 'get_weather', arguments: '{"city":"Paris"}' } };
    return { reasoning, content: 'Hello after a pause', finish: 'stop' };
  };
}

/** The upstream was asked to think, in its own words (the OpenAI upstream only when the client spoke OpenAI). */
function expectThinkingAsked(w: World, t: Target, client: 'openai' | 'claude' | 'gemini') {
  const body = sentTo(w, t);
  switch (familyOf(t)) {
    case 'openai':
      if (client === 'openai') expect(body.reasoning_effort).toBe('low');
      break;
    case 'claude':
      expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
      expect(body.max_tokens).toBeGreaterThan(1024);
      expect(body.temperature).toBeUndefined();
      break;
    case 'gemini':
      expect(body.generationConfig.thinkingConfig).toMatchObject({ thinkingBudget: 1024, includeThoughts: true });
      break;
  }
}

await describeEachDb('thinking across formats, every client format × provider', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
  });
  afterAll(() => stopWorld(w));
  beforeEach(() => {
    resetScripts(w);
    reasoningOpenai(w);
  });

  for (const t of ALL_TARGETS) {
    const model = TARGETS[t];

    it(`OpenAI client → ${t}: reasoning_effort asks, reasoning_content answers, whole and streamed`, async () => {
      const c = openaiClient(w);
      const r = await c.chat.completions.create({
        model,
        max_tokens: 2000,
        reasoning_effort: 'low',
        messages: [{ role: 'user', content: 'Say hello' }],
      });
      const message = r.choices[0].message as (typeof r.choices)[0]['message'] & { reasoning_content?: string };
      expect(message.reasoning_content).toMatch(/thinking/i);
      expect(message.content).toMatch(/hello/i);
      expectThinkingAsked(w, t, 'openai');

      const stream = await c.chat.completions.create({
        model,
        max_tokens: 2000,
        reasoning_effort: 'low',
        stream: true,
        messages: [{ role: 'user', content: 'Say hello' }],
      });
      let reasoning = '';
      let text = '';
      let reasoningBeforeText = true;
      for await (const ch of stream) {
        const d = ch.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
        if (d?.reasoning_content && text) reasoningBeforeText = false;
        reasoning += d?.reasoning_content ?? '';
        text += d?.content ?? '';
      }
      expect(reasoning).toMatch(/thinking/i);
      expect(text).toMatch(/hello/i);
      expect(reasoningBeforeText).toBe(true);
    });

    it(`OpenAI client → ${t}: a tool round trip with reasoning_effort succeeds though no signature comes back`, async () => {
      const c = openaiClient(w);
      const base = {
        model,
        max_tokens: 2000,
        reasoning_effort: 'low' as const,
        tools: [{ type: 'function' as const, function: WEATHER_TOOL }],
      };
      const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
      const first = await c.chat.completions.create({ ...base, messages: [question] });
      const message = first.choices[0].message;
      const call = message.tool_calls?.[0];
      if (call?.type !== 'function') throw new Error(`no function call in ${JSON.stringify(message)}`);
      expect(call.function.name).toBe('get_weather');
      expectThinkingAsked(w, t, 'openai');

      // the assistant message goes back as it came, reasoning_content included: Chat Completions has no signature
      const r = await c.chat.completions.create({
        ...base,
        messages: [question, message, { role: 'tool', tool_call_id: call.id, content: '{"temp":"21C"}' }],
      });
      expect(r.choices[0].message.content).toContain('21C');
      if (familyOf(t) === 'claude') {
        // Claude would refuse thinking on a tool loop that lost its thinking block: this turn goes without
        const body = sentTo(w, t);
        expect(body.thinking).toBeUndefined();
        expect(body.messages.at(-2).content.map((b: any) => b.type)).not.toContain('thinking');
      }
    });

    it(`Anthropic client → ${t}: thinking asks, thinking blocks answer, whole and streamed`, async () => {
      const c = claudeClient(w);
      const params = {
        model,
        max_tokens: 2000,
        thinking: { type: 'enabled' as const, budget_tokens: 1024 },
        messages: [{ role: 'user' as const, content: 'Say hello' }],
      };
      const r = await c.messages.create(params);
      expect(r.content[0].type).toBe('thinking');
      const thinking = r.content[0] as Anthropic.ThinkingBlock;
      expect(thinking.thinking).toMatch(/thinking/i);
      if (familyOf(t) === 'claude') expect(thinking.signature).toBe(mockSignature(thinking.thinking));
      expect(r.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toMatch(/hello/i);
      expectThinkingAsked(w, t, 'claude');

      const stream = c.messages.stream(params);
      let thinkingDeltas = 0;
      let signatureDeltas = 0;
      for await (const ev of stream) {
        if (ev.type === 'content_block_delta' && ev.delta.type === 'thinking_delta') thinkingDeltas++;
        if (ev.type === 'content_block_delta' && ev.delta.type === 'signature_delta') signatureDeltas++;
      }
      const final = await stream.finalMessage();
      expect(thinkingDeltas).toBeGreaterThan(0);
      expect(final.content[0].type).toBe('thinking');
      if (familyOf(t) === 'claude') {
        expect(signatureDeltas).toBe(1);
        const block = final.content[0] as Anthropic.ThinkingBlock;
        expect(block.signature).toBe(mockSignature(block.thinking));
      }
    });

    it(`Gemini client → ${t}: thinkingConfig asks, thought parts answer, whole and streamed`, async () => {
      const g = googleClient(w);
      const config = { maxOutputTokens: 2000, thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } };
      const r = await g.models.generateContent({ model, contents: 'Say hello', config });
      const parts = r.candidates?.[0]?.content?.parts ?? [];
      expect(parts.find((p) => p.thought)?.text).toMatch(/thinking/i);
      expect(r.text).toMatch(/hello/i);
      expect(r.text).not.toMatch(/thinking/i);
      expectThinkingAsked(w, t, 'gemini');

      let thoughts = '';
      let text = '';
      for await (const ch of await g.models.generateContentStream({ model, contents: 'Say hello', config }))
        for (const p of ch.candidates?.[0]?.content?.parts ?? []) {
          if (p.thought) thoughts += p.text ?? '';
          else text += p.text ?? '';
        }
      expect(thoughts).toMatch(/thinking/i);
      expect(text).toMatch(/hello/i);
    });

    it(`Anthropic client → ${t}: a signed thinking block goes back with the tool result`, async () => {
      const c = claudeClient(w);
      const tools = [
        {
          name: WEATHER_TOOL.name,
          description: WEATHER_TOOL.description,
          input_schema: WEATHER_TOOL.parameters as any,
        },
      ];
      const base = {
        model,
        max_tokens: 2000,
        thinking: { type: 'enabled' as const, budget_tokens: 1024 },
        tools,
      };
      const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
      const first = await c.messages.stream({ ...base, messages: [question] }).finalMessage();
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
      expect(use.name).toBe('get_weather');
      const thinking = first.content.find((b) => b.type === 'thinking') as Anthropic.ThinkingBlock | undefined;
      if (familyOf(t) === 'claude') expect(thinking?.signature).toBe(mockSignature(thinking?.thinking ?? ''));

      const r = await c.messages.create({
        ...base,
        messages: [
          question,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '{"temp":"21C"}' }] },
        ],
      });
      expect(r.stop_reason).toBe('end_turn');
      expect(r.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toContain('21C');
      const body = sentTo(w, t);
      if (familyOf(t) === 'claude') {
        const assistant = body.messages.at(-2);
        expect(assistant.content[0]).toEqual({
          type: 'thinking',
          thinking: thinking!.thinking,
          signature: thinking!.signature,
        });
        expect(assistant.content.find((b: any) => b.type === 'tool_use').id).toBe(use.id);
      }
      if (familyOf(t) === 'gemini' && thinking?.signature) {
        // Gemini's thought signature rode on the function call; it must go back on it
        const modelTurn = body.contents.at(-2);
        expect(modelTurn.parts.find((p: any) => p.functionCall)?.thoughtSignature).toBe(thinking.signature);
      }
    });

    it(`Gemini client → ${t}: thoughts and their signature go back with the function response`, async () => {
      const g = googleClient(w);
      const config = {
        maxOutputTokens: 2000,
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
        // a copy: the SDK rewrites a declaration's schema in place
        tools: [{ functionDeclarations: [structuredClone(WEATHER_TOOL) as any] }],
      };
      const question = { role: 'user', parts: [{ text: 'What is the weather in Paris?' }] };
      const first = await g.models.generateContent({ model, contents: [question], config });
      const parts = first.candidates?.[0]?.content?.parts ?? [];
      const call = parts.find((p) => p.functionCall)?.functionCall;
      expect(call?.name).toBe('get_weather');
      const thought = parts.find((p) => p.thought);
      expect(thought?.text).toMatch(/thinking/i);

      const r = await g.models.generateContent({
        model,
        config,
        contents: [
          question,
          { role: 'model', parts },
          {
            role: 'user',
            parts: [{ functionResponse: { name: 'get_weather', id: call?.id, response: { temp: '21C' } } }],
          },
        ],
      });
      expect(r.text).toContain('21C');
      const body = sentTo(w, t);
      if (familyOf(t) === 'claude') {
        // Claude needs the thinking block back whole: its text and its signature
        const assistant = body.messages.at(-2);
        expect(assistant.content[0]).toEqual({
          type: 'thinking',
          thinking: thought!.text,
          signature: mockSignature(thought!.text!),
        });
      }
      if (familyOf(t) === 'gemini') {
        const signed = parts.find((p) => p.thoughtSignature);
        const modelTurn = body.contents.at(-2);
        expect(modelTurn.parts.find((p: any) => p.functionCall)?.thoughtSignature).toBe(signed?.thoughtSignature);
      }
    });
  }
  // The OpenAI channel answers Responses natively (its lane passes the items through), so only translated targets.
  for (const t of ALL_TARGETS.filter((x) => x !== 'openai')) {
    const model = TARGETS[t];
    const tools = [{ type: 'function' as const, ...WEATHER_TOOL, strict: false }];
    const base = { model, tools, reasoning: { effort: 'low' as const }, max_output_tokens: 2000 };
    const question: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'What is the weather in Paris?' }];

    /** The second turn as OpenAI's guide builds it: the question, the output items as they came, the tool's output. */
    const secondTurn = async (output: unknown[]) => {
      const call = output.find((i: any) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
      expect(call?.name).toBe('get_weather');
      const input = [
        ...question,
        ...(output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output' as const, call_id: call.call_id, output: '{"temp":"21C"}' },
      ];
      return openaiClient(w).responses.create({ ...base, input });
    };

    /** What the upstream got back: Claude the signed block whole, first in the turn; Gemini the signature on the call. */
    const expectSignatureSentBack = (reasoning: OpenAI.Responses.ResponseReasoningItem[]) => {
      const body = sentTo(w, t);
      if (familyOf(t) === 'claude') {
        const text = reasoning[0].summary.map((s) => s.text).join('');
        expect(text).toMatch(/thinking/i);
        expect(body.messages.at(-2).content[0]).toEqual({
          type: 'thinking',
          thinking: text,
          signature: mockSignature(text),
        });
      } else {
        const modelTurn = body.contents.at(-2);
        const signature = modelTurn.parts.find((p: any) => p.functionCall)?.thoughtSignature;
        expect(signature).toEqual(expect.any(String));
        expect(reasoning.some((r) => r.encrypted_content?.endsWith(signature))).toBe(true);
      }
    };

    it(`Responses client → ${t}: reasoning items carry the signature back with the function output`, async () => {
      const first = await openaiClient(w).responses.create({ ...base, input: question });
      const reasoning = first.output.filter((i) => i.type === 'reasoning');
      expect(reasoning.length).toBeGreaterThan(0);
      expect(reasoning.every((r) => typeof r.encrypted_content === 'string')).toBe(true);
      expectThinkingAsked(w, t, 'claude');

      const second = await secondTurn(first.output);
      expect(second.output_text).toContain('21C');
      expectSignatureSentBack(reasoning);
    });

    it(`Responses client → ${t}: streamed reasoning items carry the signature back too`, async () => {
      // the items as a client that keeps response.output_item.done events (Codex) has them
      const items: OpenAI.Responses.ResponseOutputItem[] = [];
      for await (const ev of openaiClient(w).responses.stream({ ...base, input: question }))
        if (ev.type === 'response.output_item.done') items.push(ev.item);
      const reasoning = items.filter((i) => i.type === 'reasoning');
      expect(reasoning.length).toBeGreaterThan(0);
      expect(reasoning.every((r) => typeof r.encrypted_content === 'string')).toBe(true);

      const second = await secondTurn(items);
      expect(second.output_text).toContain('21C');
      expectSignatureSentBack(reasoning);
    });
  }
});
