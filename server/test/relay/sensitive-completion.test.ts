// The completion's sensitive-word check (CheckSensitiveOnCompletionEnabled, StopOnSensitiveEnabled; new-api-compat.md
// §4.7 "Sensitive words in completions"): a whole answer with a word is refused with 400 sensitive_words_detected and
// charged (stop on) or masked with `**###**` (stop off); a stream is masked where the word ends, even when the word
// is split across two events, and with stop on it ends there (a content_filter finish, the upstream aborted), billed
// for the text delivered plus the prompt. OpenAI chat clients, and Claude and Gemini clients on the translated lane
// (an OpenAI channel), on the three databases.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { chatCompletion, MockUpstream } from '../helpers/mock-upstream.js';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../helpers/mock-anthropic.js';
import { GEMINI_MOCK_KEY, MockGemini } from '../helpers/mock-gemini.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  logsOf,
  openHolds,
  setOptions,
  userRow,
  waitFor,
} from './fixtures.js';
import { countTextTokens } from '../../src/services/tokenizer.js';
import { outputCheck, StreamTextScanner } from '../../src/relay/sensitive-output.js';
import { sensitiveMatcher } from '../../src/services/sensitive-words.js';

const MODEL = 'sens-out-model';
const CLAUDE = 'claude-3-5-sonnet-20241022';
const GEMINI = 'gemini-2.0-flash';
// the native mocks split their text at spaces: the word comes whole, in the second piece
const NATIVE_TEXT = 'Hello test_sensitive world and more';
const NATIVE_DELIVERED = 'Hello **###** ';
const PROMPT = 'Tell me something';
const WORD = 'test_sensitive';
// the word arrives in two events: "test_sen" ends the first, "sitive" begins the second
const SPLIT = ['Hello test_sen', 'sitive world', ' and more'];
// what the client is given up to the stop: the second event's part of the word is masked
const DELIVERED = 'Hello test_sen**###** world';

describe('the streamed text scanner', () => {
  const check = () => ({ matcher: sensitiveMatcher(`${WORD}\nbad`)!, stop: true, found: [] as string[] });

  it('finds a word split across pieces, masks the part in the piece that ends it, and reports it once', () => {
    const c = check();
    const s = new StreamTextScanner(c);
    expect(s.scan('Hello TEST_')).toEqual({ text: 'Hello TEST_', hit: false });
    expect(s.scan('sen')).toEqual({ text: 'sen', hit: false });
    expect(s.scan('sitive, bad')).toEqual({ text: '**###**, **###**', hit: true });
    expect(s.scan(' fine')).toEqual({ text: ' fine', hit: false });
    expect(c.found).toEqual(['TEST_sensitive', 'bad']);
  });

  it('is off unless both options are on', async () => {
    const s = await startTestServer();
    try {
      expect(outputCheck(s.ctx.options)).toBeNull();
      await setOptions(s, { CheckSensitiveOnCompletionEnabled: 'true' });
      expect(outputCheck(s.ctx.options)).toMatchObject({ stop: true, found: [] });
      await setOptions(s, { CheckSensitiveEnabled: 'false' });
      expect(outputCheck(s.ctx.options)).toBeNull();
    } finally {
      await s.close();
    }
  });
});

/** The data payloads of an SSE body. */
function payloads(body: string): string[] {
  return body
    .split(/\r?\n\r?\n/)
    .flatMap((ev) => ev.split(/\r?\n/).filter((l) => l.startsWith('data:')))
    .map((l) => l.slice(5).trim());
}

await describeEachDb('sensitive words in completions', (kind) => {
  let s: TestServer;
  let up: MockUpstream;
  let anthropic: MockAnthropic;
  let gemini: MockGemini;
  let key: string;
  let userId: number;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    [up, anthropic, gemini] = await Promise.all([MockUpstream.start(), MockAnthropic.start(), MockGemini.start()]);
    await setOptions(s, {
      ModelRatio: { [MODEL]: 1, [CLAUDE]: 1, [GEMINI]: 1 },
      CompletionRatio: { [MODEL]: 1, [CLAUDE]: 1, [GEMINI]: 1 },
      CheckSensitiveOnCompletionEnabled: 'true',
    });
    await addChannel(s, { baseUrl: up.url, models: [MODEL] });
    await addChannel(s, { type: 14, baseUrl: anthropic.url, key: ANTHROPIC_MOCK_KEY, models: [CLAUDE] });
    await addChannel(s, { type: 24, baseUrl: gemini.url, key: GEMINI_MOCK_KEY, models: [GEMINI] });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 10_000_000 });
    userId = u.id;
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([up?.close(), anthropic?.close(), gemini?.close()]);
  });
  beforeEach(async () => {
    up.reset();
    anthropic.reset();
    gemini.reset();
    await setOptions(s, { StopOnSensitiveEnabled: 'true' });
  });

  /** A relay POST; `auth` replaces the default `Authorization: Bearer` (Claude's and Gemini's own key headers). */
  const post = (path: string, body: unknown, auth: Record<string, string> = { authorization: `Bearer sk-${key}` }) =>
    fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify(body),
    });

  /** Runs a request and returns its log row, after checking that the user paid exactly that row's quota. */
  async function billed(run: () => Promise<void>) {
    const before = (await userRow(s, userId)).quota;
    const logs = (await logsOf(s, userId)).length;
    await run();
    const rows = await logsOf(s, userId);
    expect(rows).toHaveLength(logs + 1);
    const row = rows[rows.length - 1];
    expect((await userRow(s, userId)).quota).toBe(before - row.quota);
    expect(await openHolds(s, userId)).toEqual([]);
    return row;
  }

  /** A stream split across the word that, if it were read on, would hang after the word: the relay must stop it. */
  const splitStreamThatHangs = () =>
    (up.behave = () => ({ kind: 'stream', spec: { pieces: SPLIT, hangAfter: 2, usage: 'never' } }));

  /** The bill of a stream stopped at the word: the prompt and the delivered text, counted locally. */
  async function expectStoppedBill(
    row: Awaited<ReturnType<typeof billed>>,
    o: { delivered: string; model: string; aborted: () => number } = {
      delivered: DELIVERED,
      model: MODEL,
      aborted: () => up.closedEarly,
    },
  ) {
    expect(row.completion_tokens).toBe(countTextTokens(o.delivered, o.model));
    expect(row.prompt_tokens).toBeGreaterThan(0);
    // ratios of 1 (the Claude and Gemini models keep new-api's fixed completion ratios)
    if (o.model === MODEL) expect(row.quota).toBe(row.prompt_tokens + row.completion_tokens);
    expect(row.content).toContain(`，敏感词：${WORD}`);
    expect(row.otherJson).toMatchObject({ sensitive_words: [WORD], stopped_on_sensitive: true });
    // the upstream sees its connection closed a moment after the client got its answer: wait for it
    await waitFor(() => o.aborted() >= 1, 5000).catch(() => undefined);
    expect(o.aborted()).toBe(1);
  }

  it('a whole OpenAI chat answer with a word: refused with 400, charged for its usage (stop on)', async () => {
    up.behave = () => ({
      kind: 'json',
      body: chatCompletion(MODEL, 'Sure: TEST_SENSITIVE here', { prompt_tokens: 11, completion_tokens: 7 }),
    });
    let status = 0;
    let j: any;
    const row = await billed(async () => {
      const r = await post('/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: PROMPT }] });
      status = r.status;
      j = await r.json();
    });
    expect(status).toBe(400);
    expect(j.error).toMatchObject({ type: 'new_api_error', code: 'sensitive_words_detected' });
    expect(j.error.message).toMatch(/^sensitive words detected on response: test_sensitive \(request id: /);
    expect(row).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, quota: 18 });
    expect(row.content).toContain('，敏感词：TEST_SENSITIVE');
    expect(row.otherJson).toMatchObject({ sensitive_words: ['TEST_SENSITIVE'], sensitive_refused: true });
  });

  it('a whole OpenAI chat answer with a word: masked and charged as usual (stop off)', async () => {
    await setOptions(s, { StopOnSensitiveEnabled: 'false' });
    up.behave = () => ({
      kind: 'json',
      body: chatCompletion(MODEL, 'Sure: test_sensitive here', { prompt_tokens: 11, completion_tokens: 7 }),
    });
    let j: any;
    const row = await billed(async () => {
      const r = await post('/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: PROMPT }] });
      expect(r.status).toBe(200);
      j = await r.json();
    });
    expect(j.choices[0].message.content).toBe('Sure: **###** here');
    expect(j.model).toBe(MODEL);
    expect(row.quota).toBe(18);
    expect(row.otherJson.sensitive_refused).toBeUndefined();
  });

  it('an OpenAI chat stream with a word split across two events stops there, billed for what was delivered (stop on)', async () => {
    splitStreamThatHangs();
    let body = '';
    const row = await billed(async () => {
      const r = await post('/v1/chat/completions', {
        model: MODEL,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: PROMPT }],
      });
      expect(r.status).toBe(200);
      body = await r.text();
    });
    const data = payloads(body);
    expect(data[data.length - 1]).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(DELIVERED);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('content_filter');
    // the usage the client asked for is the one billed
    const usage = chunks.find((c) => c.usage)?.usage;
    await expectStoppedBill(row);
    expect(usage).toMatchObject({ prompt_tokens: row.prompt_tokens, completion_tokens: row.completion_tokens });
  });

  it('an OpenAI chat stream with a split word goes on to its end, the word masked (stop off)', async () => {
    await setOptions(s, { StopOnSensitiveEnabled: 'false' });
    up.behave = () => ({
      kind: 'stream',
      spec: { pieces: SPLIT, usage: 'always', usageValue: { prompt_tokens: 11, completion_tokens: 9 } },
    });
    let body = '';
    const row = await billed(async () => {
      const r = await post('/v1/chat/completions', {
        model: MODEL,
        stream: true,
        messages: [{ role: 'user', content: PROMPT }],
      });
      body = await r.text();
    });
    const chunks = payloads(body)
      .filter((d) => d !== '[DONE]')
      .map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(`${DELIVERED} and more`);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('stop');
    expect(payloads(body).pop()).toBe('[DONE]');
    expect(row).toMatchObject({ prompt_tokens: 11, completion_tokens: 9, quota: 20 });
    expect(row.otherJson.sensitive_words).toEqual([WORD]);
    expect(row.otherJson.stopped_on_sensitive).toBeUndefined();
  });

  it('a Claude client on an OpenAI channel: the stream stops at the split word with a refusal (stop on)', async () => {
    splitStreamThatHangs();
    let body = '';
    const row = await billed(async () => {
      const r = await post(
        '/v1/messages',
        { model: MODEL, max_tokens: 100, stream: true, messages: [{ role: 'user', content: PROMPT }] },
        { 'x-api-key': `sk-${key}`, 'anthropic-version': '2023-06-01' },
      );
      expect(r.status).toBe(200);
      body = await r.text();
    });
    const events = payloads(body).map((d) => JSON.parse(d));
    const text = events
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => e.delta.text)
      .join('');
    expect(text).toBe(DELIVERED);
    const delta = events.find((e) => e.type === 'message_delta');
    expect(delta.delta.stop_reason).toBe('refusal');
    expect(events[events.length - 1].type).toBe('message_stop');
    await expectStoppedBill(row);
    expect(delta.usage.output_tokens).toBe(row.completion_tokens);
  });

  it('a Claude client on an OpenAI channel: a whole answer with a word is refused in Claude’s error shape', async () => {
    up.behave = () => ({
      kind: 'json',
      body: chatCompletion(MODEL, 'Sure: test_sensitive', { prompt_tokens: 11, completion_tokens: 7 }),
    });
    let status = 0;
    let j: any;
    const row = await billed(async () => {
      const r = await post(
        '/v1/messages',
        { model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] },
        { 'x-api-key': `sk-${key}`, 'anthropic-version': '2023-06-01' },
      );
      status = r.status;
      j = await r.json();
    });
    expect(status).toBe(400);
    expect(j.type).toBe('error');
    expect(j.error.message).toMatch(/^sensitive words detected on response: test_sensitive/);
    expect(row.quota).toBe(18);
  });

  it('a Gemini client on an OpenAI channel: the stream stops at the split word with SAFETY (stop on)', async () => {
    splitStreamThatHangs();
    let body = '';
    const row = await billed(async () => {
      const r = await post(
        `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
        { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] },
        { 'x-goog-api-key': `sk-${key}` },
      );
      expect(r.status).toBe(200);
      body = await r.text();
    });
    const events = payloads(body).map((d) => JSON.parse(d));
    const text = events.map((e) => (e.candidates?.[0]?.content?.parts ?? []).map((p: any) => p.text ?? '').join(''));
    expect(text.join('')).toBe(DELIVERED);
    expect(events[events.length - 1].candidates[0].finishReason).toBe('SAFETY');
    await expectStoppedBill(row);
  });

  it('a Gemini client on an OpenAI channel: a whole answer is masked (stop off)', async () => {
    await setOptions(s, { StopOnSensitiveEnabled: 'false' });
    up.behave = () => ({
      kind: 'json',
      body: chatCompletion(MODEL, 'Sure: Test_Sensitive.', { prompt_tokens: 11, completion_tokens: 7 }),
    });
    let j: any;
    const row = await billed(async () => {
      const r = await post(
        `/v1beta/models/${MODEL}:generateContent`,
        { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] },
        { 'x-goog-api-key': `sk-${key}` },
      );
      expect(r.status).toBe(200);
      j = await r.json();
    });
    expect(j.candidates[0].content.parts[0].text).toBe('Sure: **###**.');
    expect(row.quota).toBe(18);
    expect(row.otherJson.sensitive_words).toEqual(['Test_Sensitive']);
  });

  it('an OpenAI completions stream stops at a split word with a content_filter finish (stop on)', async () => {
    const event = (text: string, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'cmpl-s', object: 'text_completion', created: 1, model: MODEL, choices: [{ index: 0, text, finish_reason: finish }] })}\n\n`;
    up.behave = () => ({
      kind: 'raw',
      status: 200,
      contentType: 'text/event-stream',
      body: SPLIT.map((t) => event(t, null)).join('') + event('', 'stop') + 'data: [DONE]\n\n',
    });
    let body = '';
    const row = await billed(async () => {
      const r = await post('/v1/completions', { model: MODEL, stream: true, prompt: PROMPT });
      expect(r.status).toBe(200);
      body = await r.text();
    });
    const data = payloads(body);
    expect(data[data.length - 1]).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.choices[0].text).join('')).toBe(DELIVERED);
    expect(chunks[chunks.length - 1].choices[0]).toMatchObject({ text: '', finish_reason: 'content_filter' });
    expect(row.completion_tokens).toBe(countTextTokens(DELIVERED, MODEL));
    expect(row.otherJson).toMatchObject({ sensitive_words: [WORD], stopped_on_sensitive: true });
  });

  it('a Claude client on an Anthropic channel (native lane): the stream stops at the word (stop on)', async () => {
    anthropic.behave = () => ({
      kind: 'answer',
      content: [{ type: 'text', text: NATIVE_TEXT }],
      stream: { pieces: 5, hangAfterEvents: 6 },
    });
    let body = '';
    const row = await billed(async () => {
      const r = await post(
        '/v1/messages',
        { model: CLAUDE, max_tokens: 100, stream: true, messages: [{ role: 'user', content: PROMPT }] },
        { 'x-api-key': `sk-${key}`, 'anthropic-version': '2023-06-01' },
      );
      expect(r.status).toBe(200);
      body = await r.text();
    });
    // Claude's named events survive the re-encoding the check needs
    expect(body).toContain('event: message_stop');
    const events = payloads(body).map((d) => JSON.parse(d));
    const text = events
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => e.delta.text)
      .join('');
    expect(text).toBe(NATIVE_DELIVERED);
    expect(events.find((e) => e.type === 'message_delta').delta.stop_reason).toBe('refusal');
    await expectStoppedBill(row, { delivered: NATIVE_DELIVERED, model: CLAUDE, aborted: () => anthropic.closedEarly });
  });

  it('a Gemini client on a Gemini channel (native lane): the stream stops at the word (stop on)', async () => {
    gemini.behave = () => ({
      kind: 'answer',
      parts: [{ text: NATIVE_TEXT }],
      stream: { pieces: 5, hangAfterChunks: 3 },
    });
    let body = '';
    const row = await billed(async () => {
      const r = await post(
        `/v1beta/models/${GEMINI}:streamGenerateContent?alt=sse`,
        { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] },
        { 'x-goog-api-key': `sk-${key}` },
      );
      expect(r.status).toBe(200);
      body = await r.text();
    });
    const events = payloads(body).map((d) => JSON.parse(d));
    const text = events.map((e) => (e.candidates?.[0]?.content?.parts ?? []).map((p: any) => p.text ?? '').join(''));
    expect(text.join('')).toBe(NATIVE_DELIVERED);
    expect(events[events.length - 1].candidates[0].finishReason).toBe('SAFETY');
    await expectStoppedBill(row, { delivered: NATIVE_DELIVERED, model: GEMINI, aborted: () => gemini.closedEarly });
  });

  it('a whole Claude answer on an Anthropic channel (native lane) is masked (stop off)', async () => {
    await setOptions(s, { StopOnSensitiveEnabled: 'false' });
    anthropic.behave = () => ({ kind: 'answer', content: [{ type: 'text', text: NATIVE_TEXT }] });
    let j: any;
    const row = await billed(async () => {
      const r = await post(
        '/v1/messages',
        { model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] },
        { 'x-api-key': `sk-${key}`, 'anthropic-version': '2023-06-01' },
      );
      expect(r.status).toBe(200);
      j = await r.json();
    });
    expect(j.content[0].text).toBe('Hello **###** world and more');
    expect(j.model).toBe(CLAUDE);
    expect(row.otherJson.sensitive_words).toEqual([WORD]);
  });

  it('an OpenAI client on an Anthropic channel: a word in the unterminated last event ends the stream once', async () => {
    const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}`;
    const delta = (text: string) =>
      ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
    const message = { id: 'msg_s', type: 'message', role: 'assistant', model: CLAUDE, content: [], stop_reason: null };
    anthropic.behave = () => ({
      kind: 'raw',
      status: 200,
      contentType: 'text/event-stream',
      // the upstream closes without the blank line after its last event
      body: [
        ev('message_start', {
          type: 'message_start',
          message: { ...message, usage: { input_tokens: 5, output_tokens: 1 } },
        }),
        ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
        delta('Hello '),
        delta('test_sensitive'),
      ].join('\n\n'),
    });
    const r = await post('/v1/chat/completions', {
      model: CLAUDE,
      stream: true,
      messages: [{ role: 'user', content: PROMPT }],
    });
    const data = payloads(await r.text());
    expect(data.filter((d) => d === '[DONE]')).toHaveLength(1);
    expect(data[data.length - 1]).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hello **###**');
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(['content_filter']);
  });
});
