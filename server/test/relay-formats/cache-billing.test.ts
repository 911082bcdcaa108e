// Usage with cache reads, cache writes and thinking tokens billed to the unit, for every client format × provider,
// whole and streamed: Claude's cache_read_input_tokens at the cache ratio and cache_creation_input_tokens at the
// cache-creation ratio, OpenAI's cached_tokens and Gemini's cachedContentTokenCount at the cache ratio, Gemini's
// thoughtsTokenCount billed as completion, whatever format the client speaks; and the client sees the usage in its
// own words. The charge is worked out here from what the upstream reported, not from the log row.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import {
  ALL_TARGETS,
  balance,
  claudeClient,
  familyOf,
  googleClient,
  lastLog,
  openaiClient,
  RATIOS,
  resetScripts,
  startWorld,
  stopWorld,
  TARGETS,
  type Target,
  type World,
} from './world.js';
import { userRow } from '../relay/fixtures.js';

/** What every upstream reports, in the words of its family: input neither read nor written, reads, writes, output. */
const UNCACHED = 30;
const READ = 100;
const WRITTEN = 50;
const OUTPUT = 7;
/** Gemini's thinking tokens, reported apart from the candidates */
const THOUGHTS = 5;

/** The tokens each family reports: Claude reads and writes; OpenAI reads; Gemini reads and thoughts. */
function expected(t: Target) {
  const f = familyOf(t);
  return {
    uncached: UNCACHED,
    read: READ,
    written: f === 'claude' ? WRITTEN : 0,
    completion: f === 'gemini' ? OUTPUT + THOUGHTS : OUTPUT,
  };
}

/** Every upstream reports the cache and thinking usage above. */
function reportCacheUsage(w: World) {
  const text = 'Hello from the cache';
  const claudeUsage = {
    input_tokens: UNCACHED,
    output_tokens: OUTPUT,
    cache_read_input_tokens: READ,
    cache_creation_input_tokens: WRITTEN,
  };
  w.anthropic.behave = () => ({ kind: 'answer', content: [{ type: 'text', text }], usage: claudeUsage });
  w.scriptClaudeCloud = () => ({ kind: 'text', text, usage: claudeUsage });
  w.scriptOpenai = () => ({
    content: text,
    usage: {
      prompt_tokens: UNCACHED + READ,
      completion_tokens: OUTPUT,
      prompt_tokens_details: { cached_tokens: READ },
      completion_tokens_details: { reasoning_tokens: 2 },
    },
  });
  // Google counts cached tokens inside promptTokenCount and thoughts apart from candidatesTokenCount
  w.gemini.behave = () => ({
    kind: 'answer',
    parts: [{ text }],
    usage: {
      promptTokenCount: UNCACHED + READ,
      candidatesTokenCount: OUTPUT,
      thoughtsTokenCount: THOUGHTS,
      cachedContentTokenCount: READ,
      totalTokenCount: UNCACHED + READ + OUTPUT + THOUGHTS,
    },
  });
  w.scriptVertexGemini = () => ({
    kind: 'text',
    text,
    promptTokens: UNCACHED + READ,
    outputTokens: OUTPUT,
    thoughtsTokens: THOUGHTS,
    cachedTokens: READ,
  });
}

await describeEachDb('cache and thinking usage billed, every client format × provider', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
  });
  afterAll(() => stopWorld(w));
  beforeEach(() => {
    resetScripts(w);
    reportCacheUsage(w);
  });

  /** The last request was charged exactly the upstream's tokens at the configured ratios. */
  async function expectCharged(t: Target, before: number) {
    const e = expected(t);
    const row = await lastLog(w);
    expect(row.model_name).toBe(TARGETS[t]);
    const o = row.otherJson;
    expect(Number(o.cache_tokens)).toBe(e.read);
    expect(o.cache_ratio).toBe(RATIOS.cache);
    expect(Number(o.cache_creation_tokens ?? 0)).toBe(e.written);
    if (e.written) expect(o.cache_creation_ratio).toBe(RATIOS.cacheCreation);
    expect(row.completion_tokens).toBe(e.completion);
    const tokens =
      e.uncached + e.read * RATIOS.cache + e.written * RATIOS.cacheCreation + e.completion * o.completion_ratio;
    expect(Math.abs(row.quota - tokens * RATIOS.model * o.group_ratio)).toBeLessThanOrEqual(1);
    expect(before - (await userRow(w.s, w.userId)).quota).toBe(row.quota);
  }

  for (const t of ALL_TARGETS) {
    const model = TARGETS[t];
    const e = expected(t);

    it(`OpenAI client → ${t}: cached_tokens in the usage, cache billed, whole and streamed`, async () => {
      const c = openaiClient(w);
      let before = await balance(w);
      const r = await c.chat.completions.create({
        model,
        max_tokens: 200,
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(r.usage?.prompt_tokens_details?.cached_tokens).toBe(e.read);
      expect(r.usage?.completion_tokens).toBe(e.completion);
      expect(r.usage?.prompt_tokens).toBe(e.uncached + e.read);
      await expectCharged(t, before);

      before = await balance(w);
      const stream = await c.chat.completions.create({
        model,
        max_tokens: 200,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Hi' }],
      });
      let usage: any = null;
      for await (const ch of stream) usage = ch.usage ?? usage;
      expect(usage?.prompt_tokens_details?.cached_tokens).toBe(e.read);
      expect(usage?.completion_tokens).toBe(e.completion);
      await expectCharged(t, before);
    });

    it(`Anthropic client → ${t}: cache_read / cache_creation in the usage, billed, whole and streamed`, async () => {
      const c = claudeClient(w);
      const params = { model, max_tokens: 200, messages: [{ role: 'user' as const, content: 'Hi' }] };
      let before = await balance(w);
      const r = await c.messages.create(params);
      expect(r.usage).toMatchObject({
        input_tokens: e.uncached,
        cache_read_input_tokens: e.read,
        output_tokens: e.completion,
      });
      if (e.written) expect(r.usage.cache_creation_input_tokens).toBe(e.written);
      await expectCharged(t, before);

      before = await balance(w);
      const final = await c.messages.stream(params).finalMessage();
      expect(final.usage).toMatchObject({
        input_tokens: e.uncached,
        cache_read_input_tokens: e.read,
        output_tokens: e.completion,
      });
      if (e.written) expect(final.usage.cache_creation_input_tokens).toBe(e.written);
      await expectCharged(t, before);
    });

    it(`Gemini client → ${t}: cachedContentTokenCount in the usage, billed, whole and streamed`, async () => {
      const g = googleClient(w);
      const params = { model, contents: 'Hi', config: { maxOutputTokens: 200 } };
      let before = await balance(w);
      const r = await g.models.generateContent(params);
      const u = r.usageMetadata!;
      expect(u.cachedContentTokenCount).toBe(e.read);
      expect((u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0)).toBe(e.completion);
      expect(u.promptTokenCount).toBe(e.uncached + e.read);
      await expectCharged(t, before);

      before = await balance(w);
      let last: any = null;
      for await (const ch of await g.models.generateContentStream(params)) last = ch.usageMetadata ?? last;
      expect(last?.cachedContentTokenCount).toBe(e.read);
      expect((last?.candidatesTokenCount ?? 0) + (last?.thoughtsTokenCount ?? 0)).toBe(e.completion);
      await expectCharged(t, before);
    });
  }
});
