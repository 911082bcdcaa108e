// A Gemini image model's answer (an `inlineData` image part) reaches an OpenAI and a Claude client, whole and
// streamed, as new-api gives it: a Markdown image with a data URL in the text, beside the model's words.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import {
  balance,
  claudeClient,
  expectBilled,
  openaiClient,
  resetScripts,
  startWorld,
  stopWorld,
  TARGETS,
  type World,
} from './world.js';

/** A 1×1 transparent PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const IMAGE = `![image](data:image/png;base64,${PNG})`;
const WORDS = 'Here is a red square: ';

await describeEachDb('Gemini image output', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
  });
  afterAll(() => stopWorld(w));
  afterEach(() => resetScripts(w));

  const answerWithImage = () =>
    (w.gemini.behave = () => ({
      kind: 'answer',
      parts: [{ text: WORDS }, { inlineData: { mimeType: 'image/png', data: PNG } }],
    }));

  it('gives an OpenAI client the image as a Markdown data URL in the content, whole and streamed', async () => {
    answerWithImage();
    const c = openaiClient(w);
    const messages = [{ role: 'user' as const, content: 'Draw a red square' }];
    let before = await balance(w);
    const whole = await c.chat.completions.create({ model: TARGETS.gemini, max_tokens: 100, messages });
    expect(whole.choices[0].message.content).toBe(WORDS + IMAGE);
    await expectBilled(w, TARGETS.gemini, before);

    before = await balance(w);
    const stream = await c.chat.completions.create({ model: TARGETS.gemini, max_tokens: 100, messages, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(WORDS + IMAGE);
    await expectBilled(w, TARGETS.gemini, before);
  });

  it('gives a Claude client the image as the same Markdown in a text block (Claude answers carry no image blocks)', async () => {
    answerWithImage();
    const c = claudeClient(w);
    const messages = [{ role: 'user' as const, content: 'Draw a red square' }];
    const whole = await c.messages.create({ model: TARGETS.gemini, max_tokens: 100, messages });
    const texts = whole.content.filter((b) => b.type === 'text').map((b) => (b.type === 'text' ? b.text : ''));
    expect(texts.join('')).toBe(WORDS + IMAGE);

    const stream = await c.messages.create({ model: TARGETS.gemini, max_tokens: 100, messages, stream: true });
    let text = '';
    for await (const ev of stream)
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    expect(text).toBe(WORDS + IMAGE);
  });
});
