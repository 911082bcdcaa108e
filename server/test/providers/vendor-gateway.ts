// The set-up every vendor suite shares (test/providers/<vendor>.test.ts): a gateway on a fresh database of the kind
// asked, the vendor's strict mock (OpenAI-compatible: helpers/mock-compatible-vendor.ts; own JSON:
// helpers/mock-json-vendor.ts; signed: helpers/mock-<vendor>.ts), one channel of the vendor's type on it, a user and a
// limited token, and the model ratios that make a request's quota its token count (ratio 1, completion ratio 1, so a
// charge can be checked to the unit); the official Gemini client (geminiClient, geminiChat); then the checks of what a
// request was charged.
import { GoogleGenAI, type GenerateContentConfig, type GenerateContentResponseUsageMetadata } from '@google/genai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ChatCompletionCreateParamsStreaming, CompletionUsage } from 'openai/resources';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { TestDbKind } from '../helpers/databases.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  logsOf,
  setOptions,
  tokenRow,
  userRow,
  type ChannelSpec,
} from '../relay/fixtures.js';

/** What the suite needs of a vendor's mock: where it listens, and a way to stop it. */
export interface VendorMock {
  url: string;
  close(): Promise<void>;
}

export interface VendorSuite<M extends VendorMock> {
  s: TestServer;
  mock: M;
  key: string;
  userId: number;
  tokenId: number;
  channelId: number;
}

export interface VendorSuiteSpec<M extends VendorMock> {
  kind: TestDbKind;
  /** starts the vendor's mock */
  mock: () => Promise<M>;
  /** the channel; its base URL is the mock's, then `path` */
  channel: Omit<ChannelSpec, 'baseUrl'> & { path?: string };
  /** the models priced at ratio 1 */
  models: string[];
}

export const USER_QUOTA = 10_000_000;
export const TOKEN_QUOTA = 5_000_000;

/** Starts everything before the suite's tests and stops it after them; the returned object is filled in beforeAll. */
export function vendorSuite<M extends VendorMock>(spec: VendorSuiteSpec<M>): VendorSuite<M> {
  const suite = {} as VendorSuite<M>;
  beforeAll(async () => {
    suite.mock = await spec.mock();
    suite.s = await startTestServer({ kind: spec.kind });
    const ratio = Object.fromEntries(spec.models.map((m) => [m, 1]));
    await setOptions(suite.s, { ModelRatio: ratio, CompletionRatio: ratio });
    const { path, ...channel } = spec.channel;
    suite.channelId = await addChannel(suite.s, { ...channel, baseUrl: suite.mock.url + (path ?? '') });
    await channelsChanged(suite.s);
    const u = await addUser(suite.s, { quota: USER_QUOTA });
    suite.userId = u.id;
    const t = await addToken(suite.s, u.id, { unlimited: false, remain: TOKEN_QUOTA });
    suite.key = t.key;
    suite.tokenId = t.id;
  });
  afterAll(async () => {
    await suite.s?.close();
    await suite.mock?.close();
  });
  return suite;
}

/**
 * An OpenAI client's chat as a stream with its usage asked for, read whole: its text, and the usage of its last chunk
 * that had one.
 */
export async function streamChat(
  suite: Pick<VendorSuite<VendorMock>, 's' | 'key'>,
  body: Omit<ChatCompletionCreateParamsStreaming, 'stream' | 'stream_options'>,
): Promise<{ text: string; usage: CompletionUsage | null }> {
  const stream = await client(suite.s, suite.key).chat.completions.create({
    ...body,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: CompletionUsage | null = null;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    usage = chunk.usage ?? usage;
  }
  return { text, usage };
}

/** The official @google/genai client of the suite's token, at the gateway. */
export const geminiClient = (suite: Pick<VendorSuite<VendorMock>, 's' | 'key'>): GoogleGenAI =>
  new GoogleGenAI({ apiKey: `sk-${suite.key}`, httpOptions: { baseUrl: suite.s.url } });

/**
 * The official @google/genai client's chat through the gateway (`:generateContent`, or `:streamGenerateContent` read
 * whole): its text, and its usageMetadata (a stream's: the last chunk's that had one).
 */
export async function geminiChat(
  suite: Pick<VendorSuite<VendorMock>, 's' | 'key'>,
  model: string,
  ask: { contents: string; config?: GenerateContentConfig; stream: boolean },
): Promise<{ text: string; usage: GenerateContentResponseUsageMetadata | undefined }> {
  const gemini = geminiClient(suite);
  const params = { model, contents: ask.contents, config: ask.config };
  if (!ask.stream) {
    const r = await gemini.models.generateContent(params);
    return { text: r.text ?? '', usage: r.usageMetadata };
  }
  let text = '';
  let usage: GenerateContentResponseUsageMetadata | undefined;
  for await (const chunk of await gemini.models.generateContentStream(params)) {
    text += chunk.text ?? '';
    usage = chunk.usageMetadata ?? usage;
  }
  return { text, usage };
}

/** Edits the suite's channel as the console would (its base URL, its setting JSON), then reloads the channels. */
export async function changeChannel(
  suite: Pick<VendorSuite<VendorMock>, 's' | 'channelId'>,
  values: { base_url?: string; setting?: string },
): Promise<void> {
  await suite.s.ctx.db.updateTable('channels').set(values).where('id', '=', suite.channelId).execute();
  await channelsChanged(suite.s);
}

/**
 * A test of a vendor's wider matrix (every client format, streams, other endpoints, the mock's own refusals): run on
 * SQLite only. Each vendor's core cases (an answer charged to the unit, a vendor error charging nothing) run on every
 * database with plain `it`; the rest is the same money path again, and running it three times per vendor would
 * triple the suite's time for no new database behaviour.
 */
export const sqliteOnly = (kind: TestDbKind) => it.runIf(kind === 'sqlite');

/** What the balance checks read of a suite. */
export type ChargedSuite = Pick<VendorSuite<VendorMock>, 's' | 'userId' | 'tokenId'>;

/** The user's and the token's quota now. */
export async function balances(suite: ChargedSuite): Promise<{ user: number; token: number }> {
  const [u, t] = await Promise.all([userRow(suite.s, suite.userId), tokenRow(suite.s, suite.tokenId)]);
  return { user: u.quota, token: t.remain_quota };
}

/**
 * The request since `before` was charged exactly its usage: one new consume row with these token counts, its quota
 * their sum (ratios 1) unless a model's fixed completion ratio makes it `quota`, taken from the user and the token alike.
 */
export async function expectCharged(
  suite: ChargedSuite,
  before: { user: number; token: number; logs: number },
  usage: { prompt: number; completion: number },
  model: string,
  quota = usage.prompt + usage.completion,
): Promise<void> {
  const logs = await logsOf(suite.s, suite.userId);
  const fresh = logs.slice(before.logs);
  expect(fresh.map((l) => [l.type, l.model_name, l.prompt_tokens, l.completion_tokens, l.quota])).toEqual([
    [2, model, usage.prompt, usage.completion, quota],
  ]);
  const now = await balances(suite);
  expect(before.user - now.user).toBe(quota);
  expect(before.token - now.token).toBe(quota);
}

/** The balances and the log count before a request. */
export async function snapshot(suite: ChargedSuite): Promise<{ user: number; token: number; logs: number }> {
  const logs = await logsOf(suite.s, suite.userId);
  return { ...(await balances(suite)), logs: logs.length };
}

/** Nothing was charged since `before`: no consume row, both balances as they were. */
export async function expectNothingCharged(
  suite: ChargedSuite,
  before: { user: number; token: number; logs: number },
): Promise<void> {
  const logs = await logsOf(suite.s, suite.userId);
  expect(logs.slice(before.logs).filter((l) => l.type === 2)).toEqual([]);
  const now = await balances(suite);
  expect(now).toEqual({ user: before.user, token: before.token });
}

/** The console's channel test of a channel (GET /api/channel/test/:id) as an administrator: its answer. */
export async function channelTest(suite: { s: TestServer }, channelId: number, model: string): Promise<any> {
  const admin = await addUser(suite.s, { role: 100, username: `probe${channelId}${Date.now() % 100000}` });
  const token = `probe-admin-${admin.id}`;
  await suite.s.ctx.db.updateTable('users').set({ access_token: token }).where('id', '=', admin.id).execute();
  const r = await fetch(`${suite.s.url}/api/channel/test/${channelId}?model=${encodeURIComponent(model)}`, {
    headers: { authorization: token, 'new-api-user': String(admin.id) },
  });
  return r.json();
}
