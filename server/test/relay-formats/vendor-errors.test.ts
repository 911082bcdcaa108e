// A vendor's error reaches every client format in that client's own shape, with a sensible status, and costs the
// caller nothing: Anthropic's 529 overloaded_error and 400 invalid_request_error, Gemini's 429 RESOURCE_EXHAUSTED and
// 400 INVALID_ARGUMENT, Bedrock's ThrottlingException and ValidationException (x-amzn-ErrorType), Vertex AI's 401
// UNAUTHENTICATED, each to an OpenAI, an Anthropic and a Gemini client, whole and streamed. Retries and auto-disable
// follow the rules the OpenAI channels follow (relay/pipeline/attempts.ts, services/channel-status.ts).
import Anthropic from '@anthropic-ai/sdk';
import { ApiError } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { GEMINI_MOCK_KEY } from '../helpers/mock-gemini.js';
import { bedrockError } from '../helpers/mock-bedrock.js';
import { VERTEX_UNAUTHENTICATED } from '../helpers/mock-vertex.js';
import {
  balance,
  claudeClient,
  expectBilled,
  googleClient,
  openaiClient,
  resetScripts,
  startWorld,
  stopWorld,
  TARGETS,
  type Target,
  type World,
} from './world.js';
import { countTextTokens } from '../../src/services/tokenizer.js';
import { addChannel, channelsChanged, flushLogs, logsOf, openHolds, setOptions, waitFor } from '../relay/fixtures.js';

/** What a client saw of a failed request: the HTTP status and the error body its SDK handed back. */
interface Seen {
  status: number;
  body: any;
}

const PROMPT = 'Say hello';

async function fromOpenai(w: World, model: string, stream: boolean): Promise<Seen> {
  try {
    const r = await openaiClient(w).chat.completions.create({
      model,
      max_tokens: 50,
      messages: [{ role: 'user', content: PROMPT }],
      stream,
    });
    if (stream) for await (const _ of r as AsyncIterable<unknown>);
  } catch (e) {
    if (e instanceof OpenAI.APIError) return { status: e.status ?? 0, body: { error: e.error } };
    throw e;
  }
  throw new Error('the OpenAI client saw no error');
}

async function fromClaude(w: World, model: string, stream: boolean): Promise<Seen> {
  try {
    const r = await claudeClient(w).messages.create({
      model,
      max_tokens: 50,
      messages: [{ role: 'user', content: PROMPT }],
      stream,
    });
    if (stream) for await (const _ of r as AsyncIterable<unknown>);
  } catch (e) {
    if (e instanceof Anthropic.APIError) return { status: e.status ?? 0, body: e.error };
    throw e;
  }
  throw new Error('the Anthropic client saw no error');
}

async function fromGoogle(w: World, model: string, stream: boolean): Promise<Seen> {
  const g = googleClient(w);
  const req = { model, contents: PROMPT, config: { maxOutputTokens: 50 } };
  try {
    if (stream) for await (const _ of await g.models.generateContentStream(req));
    else await g.models.generateContent(req);
  } catch (e) {
    // the SDK's message is the error body it received, as JSON
    if (e instanceof ApiError) return { status: e.status, body: JSON.parse(e.message) };
    throw e;
  }
  throw new Error('the Gemini client saw no error');
}

interface Case {
  name: string;
  target: Target;
  status: number;
  /** the upstream's message, as the client should read it (429s read new-api's "saturated" text instead) */
  message: RegExp;
  claudeType: string;
  googleStatus: string;
  /** makes the target's mock answer the error */
  arm: (w: World) => void;
}

const SATURATED = /当前分组上游负载已饱和/;

const CASES: Case[] = [
  {
    name: 'Anthropic 529 overloaded_error',
    target: 'anthropic',
    status: 529,
    message: /^Overloaded/,
    claudeType: 'overloaded_error',
    googleStatus: 'UNAVAILABLE',
    arm: (w) => (w.anthropic.behave = () => ({ kind: 'error', status: 529, type: 'overloaded_error' })),
  },
  {
    name: 'Anthropic 400 invalid_request_error',
    target: 'anthropic',
    status: 400,
    message: /^messages\.0\.content: text content blocks must be non-empty/,
    claudeType: 'invalid_request_error',
    googleStatus: 'INVALID_ARGUMENT',
    arm: (w) =>
      (w.anthropic.behave = () => ({
        kind: 'error',
        status: 400,
        type: 'invalid_request_error',
        message: 'messages.0.content: text content blocks must be non-empty',
      })),
  },
  {
    name: 'Gemini 429 RESOURCE_EXHAUSTED',
    target: 'gemini',
    status: 429,
    message: SATURATED,
    claudeType: 'rate_limit_error',
    googleStatus: 'RESOURCE_EXHAUSTED',
    arm: (w) => (w.gemini.behave = () => ({ kind: 'error', code: 429 })),
  },
  {
    name: 'Gemini 400 INVALID_ARGUMENT',
    target: 'gemini',
    status: 400,
    message: /^Request contains an invalid argument/,
    claudeType: 'invalid_request_error',
    googleStatus: 'INVALID_ARGUMENT',
    arm: (w) => (w.gemini.behave = () => ({ kind: 'error', code: 400 })),
  },
  {
    name: 'Bedrock ThrottlingException',
    target: 'bedrock',
    status: 429,
    message: SATURATED,
    claudeType: 'rate_limit_error',
    googleStatus: 'RESOURCE_EXHAUSTED',
    arm: (w) => (w.bedrock.answer = () => bedrockError('ThrottlingException')),
  },
  {
    name: 'Bedrock ValidationException',
    target: 'bedrock',
    status: 400,
    message: /^messages: text content blocks must be non-empty/,
    claudeType: 'invalid_request_error',
    googleStatus: 'INVALID_ARGUMENT',
    arm: (w) =>
      (w.bedrock.answer = () => bedrockError('ValidationException', 'messages: text content blocks must be non-empty')),
  },
  {
    name: 'Vertex AI 401 UNAUTHENTICATED',
    target: 'vertex-gemini',
    status: 401,
    message: /^Request had invalid authentication credentials/,
    claudeType: 'authentication_error',
    googleStatus: 'UNAUTHENTICATED',
    arm: (w) => (w.vertex.answer = () => VERTEX_UNAUTHENTICATED),
  },
];

const CLIENTS = [
  ['OpenAI', fromOpenai],
  ['Anthropic', fromClaude],
  ['Gemini', fromGoogle],
] as const;

/** The error as each client format writes it: status, and the type and message in that format's fields. */
function expectShape(client: (typeof CLIENTS)[number][0], c: Case, seen: Seen) {
  expect(seen.status).toBe(c.status);
  if (client === 'OpenAI') {
    expect(seen.body.error.message).toMatch(c.message);
    expect(seen.body.error.message).toMatch(/\(request id: \w+\)$/);
  } else if (client === 'Anthropic') {
    expect(seen.body).toMatchObject({ type: 'error', error: { type: c.claudeType } });
    expect(seen.body.error.message).toMatch(c.message);
  } else {
    expect(seen.body).toMatchObject({ error: { code: c.status, status: c.googleStatus } });
    expect(seen.body.error.message).toMatch(c.message);
  }
}

await describeEachDb('vendor errors in every client format', (kind) => {
  let w: World;
  let bedrockAnswer: World['bedrock']['answer'];
  let vertexAnswer: World['vertex']['answer'];

  beforeAll(async () => {
    w = await startWorld(kind);
    bedrockAnswer = w.bedrock.answer;
    vertexAnswer = w.vertex.answer;
  });
  afterAll(() => stopWorld(w));
  afterEach(() => {
    resetScripts(w);
    w.bedrock.answer = bedrockAnswer;
    w.vertex.answer = vertexAnswer;
  });

  /** Nothing charged, nothing logged, nothing held. */
  async function expectFree(before: { quota: number; logs: number }) {
    await flushLogs(w.s);
    expect(await balance(w)).toBe(before.quota);
    expect((await logsOf(w.s, w.userId)).length).toBe(before.logs);
    expect(await openHolds(w.s, w.userId)).toEqual([]);
  }
  const snapshot = async () => ({ quota: await balance(w), logs: (await logsOf(w.s, w.userId)).length });

  for (const c of CASES) {
    for (const [client, call] of CLIENTS) {
      it(`${c.name} → ${client} client, whole and streamed: its shape, status ${c.status}, nothing charged`, async () => {
        for (const stream of [false, true]) {
          const before = await snapshot();
          c.arm(w);
          const seen = await call(w, TARGETS[c.target], stream);
          expectShape(client, c, seen);
          await expectFree(before);
        }
      });
    }
  }

  it('retries a Gemini 429 on the next channel and charges only the answer; a 400 is not retried', async () => {
    const model = 'retry-gemini';
    await setOptions(w.s, { RetryTimes: '2', ModelRatio: { [model]: 1 } });
    try {
      await addChannel(w.s, {
        type: 24,
        baseUrl: w.gemini.url,
        key: GEMINI_MOCK_KEY,
        models: [model],
        modelMapping: { [model]: TARGETS.gemini },
        priority: 10,
      });
      await addChannel(w.s, {
        type: 1,
        baseUrl: w.openai.url,
        models: [model],
        modelMapping: { [model]: TARGETS.openai },
        priority: 0,
      });
      await channelsChanged(w.s);
      const openaiCalls = () => w.openai.requests.filter((r) => r.path.includes('chat/completions')).length;

      const geminiCalls = () => w.gemini.requests.length;
      w.gemini.behave = () => ({ kind: 'error', code: 429 });
      let tried = geminiCalls();
      let calls = openaiCalls();
      const before = await snapshot();
      const r = await openaiClient(w).chat.completions.create({
        model,
        max_tokens: 50,
        messages: [{ role: 'user', content: PROMPT }],
      });
      expect(r.choices[0].message.content).toBeTruthy();
      expect(geminiCalls()).toBe(tried + 1);
      expect(openaiCalls()).toBe(calls + 1);
      await flushLogs(w.s);
      const logs = await logsOf(w.s, w.userId);
      expect(logs.length).toBe(before.logs + 1);
      expect(before.quota - (await balance(w))).toBe(logs.at(-1)!.quota);
      expect(await openHolds(w.s, w.userId)).toEqual([]);

      w.gemini.behave = () => ({ kind: 'error', code: 400 });
      tried = geminiCalls();
      calls = openaiCalls();
      const again = await snapshot();
      const seen = await fromClaude(w, model, false);
      expect(seen).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error' } } });
      expect(geminiCalls()).toBe(tried + 1);
      expect(openaiCalls()).toBe(calls);
      await expectFree(again);
    } finally {
      await setOptions(w.s, { RetryTimes: '0' });
    }
  });

  it('disables a Vertex AI channel whose credentials are refused (401) when auto-disable is on; a 429 does not', async () => {
    const model = 'vertex-revoked';
    await setOptions(w.s, { AutomaticDisableChannelEnabled: 'true', ModelRatio: { [model]: 1 } });
    try {
      const id = await addChannel(w.s, {
        type: 41,
        baseUrl: w.vertex.url,
        key: w.vertex.newServiceAccount(),
        other: 'us-central1',
        models: [model],
        modelMapping: { [model]: TARGETS['vertex-gemini'] },
      });
      await channelsChanged(w.s);
      const status = async () =>
        (await w.s.ctx.db.selectFrom('channels').select('status').where('id', '=', id).executeTakeFirstOrThrow())
          .status;

      w.vertex.answer = () => ({
        kind: 'error',
        status: 429,
        googleStatus: 'RESOURCE_EXHAUSTED',
        message:
          'Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model.',
      });
      expect((await fromGoogle(w, model, false)).status).toBe(429);
      await new Promise((r) => setTimeout(r, 100));
      expect(await status()).toBe(1);

      // the token the relay got for that call is no longer good (the key was revoked in the cloud console)
      w.vertex.answer = vertexAnswer;
      w.vertex.revokeAll();
      const seen = await fromGoogle(w, model, false);
      expect(seen).toMatchObject({ status: 401, body: { error: { status: 'UNAUTHENTICATED' } } });
      await waitFor(async () => (await status()) === 3);
      const row = await w.s.ctx.db
        .selectFrom('channels')
        .select('other_info')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(JSON.parse(row.other_info).status_reason).toMatch(/invalid authentication credentials/);
      // the abilities are turned off just after the channel's row
      const abilitiesOff = async () =>
        (await w.s.ctx.db.selectFrom('abilities').select('enabled').where('channel_id', '=', id).execute()).every(
          (a) => !a.enabled,
        );
      await waitFor(abilitiesOff);
    } finally {
      await setOptions(w.s, { AutomaticDisableChannelEnabled: 'false' });
    }
  });
});

/** What a streaming client received before its SDK reported the stream's error. */
interface Cut {
  text: string;
  error: any;
}

async function streamOpenai(w: World, model: string): Promise<Cut> {
  let text = '';
  try {
    const r = await openaiClient(w).chat.completions.create({
      model,
      max_tokens: 50,
      messages: [{ role: 'user', content: PROMPT }],
      stream: true,
    });
    for await (const chunk of r) text += chunk.choices[0]?.delta?.content ?? '';
  } catch (e) {
    if (e instanceof OpenAI.APIError) return { text, error: e.error };
    throw e;
  }
  throw new Error('the OpenAI stream ended without an error');
}

async function streamClaude(w: World, model: string): Promise<Cut> {
  let text = '';
  try {
    const r = await claudeClient(w).messages.create({
      model,
      max_tokens: 50,
      messages: [{ role: 'user', content: PROMPT }],
      stream: true,
    });
    for await (const ev of r)
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
  } catch (e) {
    if (e instanceof Anthropic.APIError) return { text, error: e.error };
    throw e;
  }
  throw new Error('the Anthropic stream ended without an error');
}

/** The stream's error as the client's format reports it in-band. */
function expectStreamError(client: 'OpenAI' | 'Anthropic', cut: Cut, claudeType: string, message: RegExp) {
  if (client === 'OpenAI') {
    expect(cut.error).toMatchObject({ type: 'upstream_error', code: 'stream_error' });
    expect(cut.error.message).toMatch(message);
  } else {
    expect(cut.error).toMatchObject({ type: 'error', error: { type: claudeType } });
    expect(cut.error.error.message).toMatch(message);
  }
}

await describeEachDb('a vendor stream that fails midway', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
  });
  afterAll(() => stopWorld(w));
  afterEach(() => resetScripts(w));

  const ANSWER = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu';

  /** One log row for the request, charging its tokens at the world's ratios, nothing held. */
  async function expectBilledOnce(before: { quota: number; logs: number }, model: string) {
    expect((await logsOf(w.s, w.userId)).length).toBe(before.logs + 1);
    const row = await expectBilled(w, model, before.quota);
    expect(row.is_stream).toBeTruthy();
    expect(await openHolds(w.s, w.userId)).toEqual([]);
    return row;
  }
  const snapshot = async () => ({ quota: await balance(w), logs: (await logsOf(w.s, w.userId)).length });

  for (const [client, read] of [
    ['OpenAI', streamOpenai],
    ['Anthropic', streamClaude],
  ] as const) {
    it(`Anthropic's event: error after some deltas → ${client} client: the text so far, then its stream error; billed for what came`, async () => {
      // message_start, content_block_start, ping, two text deltas, then the error
      w.anthropic.behave = () => ({
        kind: 'answer',
        content: [{ type: 'text', text: ANSWER }],
        stream: { pieces: 6, errorAfterEvents: { after: 5, type: 'overloaded_error', message: 'Overloaded' } },
      });
      const before = await snapshot();
      const cut = await read(w, TARGETS.anthropic);
      expect(cut.text).toBe('alpha beta gamma delta ');
      expectStreamError(client, cut, 'overloaded_error', /^Overloaded/);
      const row = await expectBilledOnce(before, TARGETS.anthropic);
      // message_start's input count, and the delivered text counted (the final output count never came)
      expect(row.prompt_tokens).toBe(2); // "Say hello", in the mock's count
      expect(row.completion_tokens).toBe(countTextTokens(cut.text, TARGETS.anthropic));
    });

    it(`a Gemini stream cut midway → ${client} client: the text so far, then its stream error; billed for what came`, async () => {
      w.gemini.behave = () => ({
        kind: 'answer',
        parts: [{ text: ANSWER }],
        stream: { pieces: 6, intervalMs: 20, breakAfterChunks: 2 },
      });
      const before = await snapshot();
      const cut = await read(w, TARGETS.gemini);
      expect(cut.text).toBe('alpha beta gamma delta ');
      expectStreamError(client, cut, 'api_error', /other side closed|terminated|socket/i);
      const row = await expectBilledOnce(before, TARGETS.gemini);
      // Gemini's running usage covered the two chunks that came: four words, in the mock's count
      expect(row.completion_tokens).toBe(Math.max(4, countTextTokens(cut.text, TARGETS.gemini)));
      expect(row.completion_tokens).toBeLessThan(countTextTokens(ANSWER, TARGETS.gemini));
    });
  }
});
