// Generation parameters and finish reasons, for every client format × provider: temperature / top-p / top-k and
// stop sequences reach the upstream in its own words; an answer cut by max tokens or ended by a stop sequence says so
// in the client's words (OpenAI length / stop, Claude max_tokens / stop_sequence with the sequence, Gemini
// MAX_TOKENS / STOP), whole and streamed; JSON output is asked the way the upstream can be asked.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
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
  type Target,
  type World,
} from './world.js';

/** The user text the Anthropic and Gemini mocks echo: the stop sequence cuts it. */
const PROMPT = 'Say hello END and more';
const CITY_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
};

/** Every upstream stops at END (the Anthropic and Gemini mocks do it themselves, from the prompt). */
function stopAtEnd(w: World) {
  w.scriptOpenai = () => ({ content: 'Hello there ', finish: 'stop' });
  w.scriptClaudeCloud = () => ({
    kind: 'text',
    text: 'Hello there ',
    stopReason: 'stop_sequence',
    stopSequence: 'END',
  });
  w.scriptVertexGemini = () => ({ kind: 'text', text: 'Hello there ', finishReason: 'STOP' });
}

/** Every upstream is cut at max tokens (the Anthropic and Gemini mocks do it themselves, from max tokens). */
function cutAtMax(w: World) {
  w.scriptOpenai = () => ({ content: 'Hello there my', finish: 'length' });
  w.scriptClaudeCloud = () => ({ kind: 'text', text: 'Hello there my', stopReason: 'max_tokens' });
  w.scriptVertexGemini = () => ({ kind: 'text', text: 'Hello there my', finishReason: 'MAX_TOKENS' });
}

/** Every upstream answers with a JSON object. */
function answerJson(w: World) {
  const text = '{"city":"Paris"}';
  w.scriptOpenai = () => ({ content: text, finish: 'stop' });
  w.scriptClaudeCloud = () => ({ kind: 'text', text });
  w.scriptVertexGemini = () => ({ kind: 'text', text });
  w.anthropic.behave = () => ({ kind: 'answer', content: [{ type: 'text', text }] });
  w.gemini.behave = () => ({ kind: 'answer', parts: [{ text }] });
}

/** The upstream got the sampling parameters and the stop sequence (top_k only where the client can say it). */
function expectSampling(w: World, t: Target, topK: boolean) {
  const body = sentTo(w, t);
  switch (familyOf(t)) {
    case 'openai':
      expect(body).toMatchObject({ temperature: 0.5, top_p: 0.9 });
      expect([body.stop].flat()).toEqual(['END']);
      expect(body.top_k).toBeUndefined();
      break;
    case 'claude':
      expect(body).toMatchObject({ temperature: 0.5, top_p: 0.9, stop_sequences: ['END'] });
      expect(body.top_k).toBe(topK ? 40 : undefined);
      break;
    case 'gemini':
      expect(body.generationConfig).toMatchObject({ temperature: 0.5, topP: 0.9, stopSequences: ['END'] });
      expect(body.generationConfig.topK).toBe(topK ? 40 : undefined);
      break;
  }
}

function expectMaxTokens(w: World, t: Target) {
  const body = sentTo(w, t);
  if (familyOf(t) === 'gemini') expect(body.generationConfig.maxOutputTokens).toBe(3);
  else expect(body.max_completion_tokens ?? body.max_tokens).toBe(3);
}

await describeEachDb('generation parameters and finish reasons, every client format × provider', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
  });
  afterAll(() => stopWorld(w));
  beforeEach(() => resetScripts(w));

  for (const t of ALL_TARGETS) {
    const model = TARGETS[t];
    const claudeUpstream = familyOf(t) === 'claude';

    it(`OpenAI client → ${t}: sampling and stop reach the upstream; stop and length finish reasons`, async () => {
      const c = openaiClient(w);
      stopAtEnd(w);
      const r = await c.chat.completions.create({
        model,
        max_tokens: 200,
        temperature: 0.5,
        top_p: 0.9,
        stop: ['END'],
        messages: [{ role: 'user', content: PROMPT }],
      });
      expect(r.choices[0].finish_reason).toBe('stop');
      expect(r.choices[0].message.content).not.toContain('END');
      expectSampling(w, t, false);

      cutAtMax(w);
      const stream = await c.chat.completions.create({
        model,
        max_tokens: 3,
        stream: true,
        messages: [{ role: 'user', content: 'Say hello there my friend' }],
      });
      let finish: string | null = null;
      for await (const ch of stream) finish = ch.choices[0]?.finish_reason ?? finish;
      expect(finish).toBe('length');
      expectMaxTokens(w, t);
      const whole = await c.chat.completions.create({
        model,
        max_tokens: 3,
        messages: [{ role: 'user', content: 'Say hello there my friend' }],
      });
      expect(whole.choices[0].finish_reason).toBe('length');
    });

    it(`Anthropic client → ${t}: sampling and stop reach the upstream; stop_sequence and max_tokens`, async () => {
      const c = claudeClient(w);
      stopAtEnd(w);
      const params = {
        model,
        max_tokens: 200,
        temperature: 0.5,
        top_p: 0.9,
        top_k: 40,
        stop_sequences: ['END'],
        messages: [{ role: 'user' as const, content: PROMPT }],
      };
      const r = await c.messages.create(params);
      // only a Claude upstream says which sequence stopped it; the others' "stop" is a plain end of turn
      if (claudeUpstream) expect([r.stop_reason, r.stop_sequence]).toEqual(['stop_sequence', 'END']);
      else expect([r.stop_reason, r.stop_sequence]).toEqual(['end_turn', null]);
      expectSampling(w, t, true);
      const streamed = await c.messages.stream(params).finalMessage();
      if (claudeUpstream) expect([streamed.stop_reason, streamed.stop_sequence]).toEqual(['stop_sequence', 'END']);
      else expect(streamed.stop_reason).toBe('end_turn');

      cutAtMax(w);
      const cut = { model, max_tokens: 3, messages: [{ role: 'user' as const, content: 'Say hello there my friend' }] };
      expect((await c.messages.create(cut)).stop_reason).toBe('max_tokens');
      expect((await c.messages.stream(cut).finalMessage()).stop_reason).toBe('max_tokens');
      expectMaxTokens(w, t);
    });

    it(`Gemini client → ${t}: sampling and stop reach the upstream; STOP and MAX_TOKENS`, async () => {
      const g = googleClient(w);
      stopAtEnd(w);
      const r = await g.models.generateContent({
        model,
        contents: PROMPT,
        config: { maxOutputTokens: 200, temperature: 0.5, topP: 0.9, topK: 40, stopSequences: ['END'] },
      });
      expect(r.candidates?.[0]?.finishReason).toBe('STOP');
      expect(r.text).not.toContain('END');
      expectSampling(w, t, true);

      cutAtMax(w);
      const cut = { model, contents: 'Say hello there my friend', config: { maxOutputTokens: 3 } };
      expect((await g.models.generateContent(cut)).candidates?.[0]?.finishReason).toBe('MAX_TOKENS');
      let finish: string | undefined;
      for await (const ch of await g.models.generateContentStream(cut))
        finish = ch.candidates?.[0]?.finishReason ?? finish;
      expect(finish).toBe('MAX_TOKENS');
      expectMaxTokens(w, t);
    });

    it(`OpenAI client → ${t}: json_schema output is asked the upstream's way`, async () => {
      answerJson(w);
      const r = await openaiClient(w).chat.completions.create({
        model,
        max_tokens: 200,
        response_format: { type: 'json_schema', json_schema: { name: 'place', schema: CITY_SCHEMA } },
        messages: [{ role: 'user', content: 'Where is the Eiffel tower? Answer in JSON.' }],
      });
      expect(JSON.parse(r.choices[0].message.content ?? '')).toEqual({ city: 'Paris' });
      const body = sentTo(w, t);
      switch (familyOf(t)) {
        case 'openai':
          expect(body.response_format).toEqual({
            type: 'json_schema',
            json_schema: { name: 'place', schema: CITY_SCHEMA },
          });
          break;
        case 'claude': {
          // Claude has no JSON switch in the Messages request this relay speaks: it is asked in the system prompt
          const system = typeof body.system === 'string' ? body.system : body.system.map((b: any) => b.text).join('');
          expect(system).toMatch(/JSON/);
          expect(system).toContain('"city"');
          break;
        }
        case 'gemini':
          expect(body.generationConfig).toMatchObject({
            responseMimeType: 'application/json',
            responseJsonSchema: CITY_SCHEMA,
          });
          break;
      }
    });

    it(`Gemini client → ${t}: responseMimeType JSON with a schema is asked the upstream's way`, async () => {
      answerJson(w);
      const r = await googleClient(w).models.generateContent({
        model,
        contents: 'Where is the Eiffel tower?',
        config: { maxOutputTokens: 200, responseMimeType: 'application/json', responseJsonSchema: CITY_SCHEMA },
      });
      expect(JSON.parse(r.text ?? '')).toEqual({ city: 'Paris' });
      const body = sentTo(w, t);
      switch (familyOf(t)) {
        case 'openai':
          expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { schema: CITY_SCHEMA } });
          break;
        case 'claude':
          expect(typeof body.system === 'string' ? body.system : JSON.stringify(body.system)).toMatch(/JSON/);
          break;
        case 'gemini':
          expect(body.generationConfig).toMatchObject({
            responseMimeType: 'application/json',
            responseJsonSchema: CITY_SCHEMA,
          });
          break;
      }
    });
  }
});
