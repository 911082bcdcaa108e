// Images (base64 data) in a multi-turn conversation with a system prompt, for every client format × provider: the
// upstream gets the image in its own shape (OpenAI image_url data URL, Claude base64 image source, Gemini inlineData),
// the turns in order with its own role names, and the system prompt where it belongs.
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
  type Target,
  type World,
} from './world.js';

/** A 1×1 red PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const SYSTEM = 'You describe pictures.';
const FIRST = 'What is in this picture?';
const ANSWER = 'A red dot.';
const SECOND = 'What colour was the dot?';

/** The upstream got system, user (text + image), assistant, user, in its own shape. */
function expectConversation(w: World, t: Target) {
  const body = sentTo(w, t);
  switch (familyOf(t)) {
    case 'openai': {
      const [system, user, assistant, last] = body.messages;
      expect(body.messages).toHaveLength(4);
      expect(system).toEqual({ role: 'system', content: SYSTEM });
      expect(user.role).toBe('user');
      expect(user.content).toContainEqual({ type: 'text', text: FIRST });
      expect(user.content).toContainEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } });
      expect(assistant).toMatchObject({ role: 'assistant', content: ANSWER });
      expect(last.role).toBe('user');
      expect(JSON.stringify(last.content)).toContain(SECOND);
      break;
    }
    case 'claude': {
      expect(typeof body.system === 'string' ? body.system : body.system[0].text).toBe(SYSTEM);
      expect(body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
      const [user, assistant, last] = body.messages;
      expect(user.content).toContainEqual({ type: 'text', text: FIRST });
      expect(user.content).toContainEqual({
        type: 'image',
        source: { type: 'base64', media_type: 'image/png', data: PNG },
      });
      expect(JSON.stringify(assistant.content)).toContain(ANSWER);
      expect(JSON.stringify(last.content)).toContain(SECOND);
      break;
    }
    case 'gemini': {
      expect(body.systemInstruction.parts).toEqual([{ text: SYSTEM }]);
      expect(body.contents.map((c: any) => c.role)).toEqual(['user', 'model', 'user']);
      const [user, model, last] = body.contents;
      expect(user.parts).toContainEqual({ text: FIRST });
      expect(user.parts).toContainEqual({ inlineData: { mimeType: 'image/png', data: PNG } });
      expect(model.parts).toEqual([{ text: ANSWER }]);
      expect(last.parts).toEqual([{ text: SECOND }]);
      break;
    }
  }
}

await describeEachDb('images and multi-turn, every client format × provider', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
  });
  afterAll(() => stopWorld(w));
  beforeEach(() => resetScripts(w));

  for (const t of ALL_TARGETS) {
    const model = TARGETS[t];

    it(`OpenAI client → ${t}: a data-URL image in a multi-turn conversation`, async () => {
      const before = await balance(w);
      const r = await openaiClient(w).chat.completions.create({
        model,
        max_tokens: 200,
        messages: [
          { role: 'system', content: SYSTEM },
          {
            role: 'user',
            content: [
              { type: 'text', text: FIRST },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            ],
          },
          { role: 'assistant', content: ANSWER },
          { role: 'user', content: SECOND },
        ],
      });
      expect(r.choices[0].message.content).toBeTruthy();
      expectConversation(w, t);
      await expectBilled(w, model, before);
    });

    it(`Anthropic client → ${t}: a base64 image block in a multi-turn conversation`, async () => {
      const before = await balance(w);
      const r = await claudeClient(w).messages.create({
        model,
        max_tokens: 200,
        system: SYSTEM,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: FIRST },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            ],
          },
          { role: 'assistant', content: ANSWER },
          { role: 'user', content: SECOND },
        ],
      });
      expect(r.content.some((b) => b.type === 'text' && b.text)).toBe(true);
      expectConversation(w, t);
      await expectBilled(w, model, before);
    });

    it(`Gemini client → ${t}: an inlineData image in a multi-turn conversation`, async () => {
      const before = await balance(w);
      const r = await googleClient(w).models.generateContent({
        model,
        config: { maxOutputTokens: 200, systemInstruction: SYSTEM },
        contents: [
          { role: 'user', parts: [{ text: FIRST }, { inlineData: { mimeType: 'image/png', data: PNG } }] },
          { role: 'model', parts: [{ text: ANSWER }] },
          { role: 'user', parts: [{ text: SECOND }] },
        ],
      });
      expect(r.text).toBeTruthy();
      expectConversation(w, t);
      await expectBilled(w, model, before);
    });
  }
});
