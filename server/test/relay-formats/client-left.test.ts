// A Claude or Gemini client that leaves mid-stream, on the native lane (Claude → Anthropic, Gemini → Gemini) and on
// a translated one (Gemini → Anthropic): the upstream is aborted, what was delivered is billed and logged with
// `client_left`, and no reservation is left held (test/relay/client-left.test.ts is the OpenAI version).
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { countTextTokens } from '../../src/services/tokenizer.js';
import { logsOf, openHolds, rawChat, waitFor } from '../relay/fixtures.js';
import { balance, expectBilled, resetScripts, startWorld, stopWorld, TARGETS, type World } from './world.js';

const WORDS = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
const PROMPT = 'Count for me';

await describeEachDb('a Claude or Gemini client that leaves mid-stream', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
  });
  afterAll(() => stopWorld(w));
  afterEach(() => resetScripts(w));

  /** A slow answer of many pieces from the Anthropic and Gemini mocks. */
  function slowAnswers() {
    w.anthropic.behave = () => ({
      kind: 'answer',
      content: [{ type: 'text', text: WORDS }],
      stream: { pieces: 30, intervalMs: 30 },
    });
    w.gemini.behave = () => ({ kind: 'answer', parts: [{ text: WORDS }], stream: { pieces: 30, intervalMs: 30 } });
  }

  /** Sends the request, leaves once `enough` says so, and checks the bill: delivered text only, client_left. */
  async function leave(
    o: { path: string; auth: string; body: unknown; model: string; closedEarly: () => number },
    enough: (received: string) => boolean,
  ) {
    slowAnswers();
    const before = await balance(w);
    const logs = (await logsOf(w.s, w.userId)).length;
    const aborted = o.closedEarly();
    let gone!: () => void;
    const left = new Promise<void>((r) => (gone = r));
    const c = rawChat(
      w.s.url,
      w.key,
      o.body,
      (text) => {
        if (enough(text)) {
          c.sock.destroy();
          gone();
        }
      },
      o.path,
      o.auth,
    );
    await left;
    await waitFor(() => o.closedEarly() === aborted + 1);
    await waitFor(async () => (await logsOf(w.s, w.userId)).length === logs + 1);
    const row = await expectBilled(w, o.model, before);
    expect(Boolean(row.is_stream)).toBe(true);
    expect(row.otherJson.client_left).toBe(true);
    expect(row.completion_tokens).toBeGreaterThan(0);
    // a few pieces of thirty came before the client left: far less than the whole answer is billed
    expect(row.completion_tokens).toBeLessThan(countTextTokens(WORDS, o.model) / 2);
    expect(await openHolds(w.s, w.userId)).toEqual([]);
    return row;
  }

  const claudeBody = (model: string) => ({
    model,
    max_tokens: 500,
    stream: true,
    messages: [{ role: 'user', content: PROMPT }],
  });
  const geminiBody = { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] };
  const deltas = (text: string, marker: string) => text.split(marker).length - 1;

  it('Claude client on an Anthropic channel (native lane)', async () => {
    const row = await leave(
      {
        path: '/v1/messages',
        auth: `x-api-key: sk-${w.key}\r\nanthropic-version: 2023-06-01`,
        body: claudeBody(TARGETS.anthropic),
        model: TARGETS.anthropic,
        closedEarly: () => w.anthropic.closedEarly,
      },
      (text) => deltas(text, '"text_delta"') >= 4,
    );
    expect(row.otherJson.claude).toBe(true);
  });

  it('Gemini client on a Gemini channel (native lane)', async () => {
    await leave(
      {
        path: `/v1beta/models/${TARGETS.gemini}:streamGenerateContent?alt=sse`,
        auth: `x-goog-api-key: sk-${w.key}`,
        body: geminiBody,
        model: TARGETS.gemini,
        closedEarly: () => w.gemini.closedEarly,
      },
      (text) => deltas(text, '"text"') >= 4,
    );
  });

  it('Gemini client on an Anthropic channel (translated lane)', async () => {
    await leave(
      {
        path: `/v1beta/models/${TARGETS.anthropic}:streamGenerateContent?alt=sse`,
        auth: `x-goog-api-key: sk-${w.key}`,
        body: geminiBody,
        model: TARGETS.anthropic,
        closedEarly: () => w.anthropic.closedEarly,
      },
      (text) => deltas(text, '"text"') >= 4,
    );
  });
});
