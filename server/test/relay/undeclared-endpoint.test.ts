// An endpoint a provider does not declare in its manifest (relay/providers/manifest.ts) is refused before anything is
// sent: for each provider, a request for such an endpoint gets today's 400 (`渠道 #N 的类型不支持 <mode> 请求`,
// convert_request_failed) in the client's format, the upstream receives nothing (no chat path either), the user's
// quota and the token's remain stay as they were, and no log row is written (a failed request has none today).
// The OpenAI-compatible providers declare every endpoint a relay route can ask of them: that is asserted explicitly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  flushLogs,
  logsOf,
  openHolds,
  relayPost,
  setOptions,
  tokenRow,
  userRow,
} from './fixtures.js';
import {
  adaptorFor,
  declares,
  providerEntries,
  registerProvider,
  type RelayInfo,
} from '../../src/relay/providers/index.js';
import { openaiCompatible } from '../../src/relay/providers/openai/compatible.js';
import { OPENAI_ENDPOINTS } from '../../src/relay/providers/openai/index.js';
import { JSON_RELAY_ROUTES } from '../../src/relay/modes/routes.js';
import { embeddingsMode } from '../../src/relay/modes/text.js';
import type { WireFormat } from '../../src/relay/formats/codec.js';

/** Channel types no built-in provider serves, for the test-only vendors below. */
const CHAT_ONLY_TYPE = 9101;
const EMBEDDINGS_ONLY_TYPE = 9102;

/** A vendor that serves chat only (an OpenAI-compatible manifest with one entry): its embeddings are refused. */
const chatOnlyVendor = openaiCompatible({
  id: 'chat-only-test-vendor',
  types: [CHAT_ONLY_TYPE],
  endpoints: { chat: OPENAI_ENDPOINTS.chat },
});

const TYPE_OF: Record<string, number> = {
  anthropic: 14,
  gemini: 24,
  bedrock: 33,
  vertex: 41,
  'chat-only-test-vendor': CHAT_ONLY_TYPE,
  'embeddings-only-test-vendor': EMBEDDINGS_ONLY_TYPE,
};

/** A vendor that serves embeddings only: a Claude client's messages must not reach its chat path. */
const embeddingsOnlyVendor = openaiCompatible({
  id: 'embeddings-only-test-vendor',
  types: [EMBEDDINGS_ONLY_TYPE],
  endpoints: { embeddings: OPENAI_ENDPOINTS.embeddings },
});

const MODELS = {
  anthropic: 'claude-3-5-haiku-20241022',
  gemini: 'gemini-2.0-flash',
  bedrock: 'claude-3-5-sonnet-20241022',
  vertexClaude: 'claude-3-5-sonnet-v2',
  vertexGemini: 'gemini-2.5-pro',
  chatOnly: 'chat-only-model',
  embeddingsOnly: 'embeddings-only-model',
};

interface Case {
  provider: string;
  /** the model, which picks the channel */
  model: string;
  path: string;
  body: Record<string, unknown>;
  /** the mode's name, as the refusal names it */
  mode: string;
  format: WireFormat;
}

const embeddings = (model: string): Pick<Case, 'model' | 'path' | 'body' | 'mode' | 'format'> => ({
  model,
  path: '/v1/embeddings',
  body: { model, input: 'hello' },
  mode: 'embeddings',
  format: 'openai',
});

const geminiEmbed = (model: string): Pick<Case, 'model' | 'path' | 'body' | 'mode' | 'format'> => ({
  model,
  path: `/v1beta/models/${model}:embedContent`,
  body: { content: { parts: [{ text: 'hello' }] } },
  mode: 'gemini embedContent',
  format: 'gemini',
});

const CASES: Case[] = [
  { provider: 'anthropic', ...embeddings(MODELS.anthropic) },
  { provider: 'anthropic', ...geminiEmbed(MODELS.anthropic) },
  {
    provider: 'gemini',
    model: MODELS.gemini,
    path: '/v1/completions',
    body: { model: MODELS.gemini, prompt: 'hello' },
    mode: 'completions',
    format: 'openai',
  },
  { provider: 'bedrock', ...embeddings(MODELS.bedrock) },
  { provider: 'vertex', ...embeddings(MODELS.vertexClaude) },
  { provider: 'vertex', ...geminiEmbed(MODELS.vertexGemini) },
  { provider: 'chat-only-test-vendor', ...embeddings(MODELS.chatOnly) },
  {
    provider: 'embeddings-only-test-vendor',
    model: MODELS.embeddingsOnly,
    path: '/v1/messages',
    body: { model: MODELS.embeddingsOnly, max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] },
    mode: 'claude messages',
    format: 'anthropic',
  },
];

/** The refusal as each client format carries it. */
function refusal(format: WireFormat, body: any): { message: string; kind: string } {
  if (format === 'gemini') return { message: body.error.message, kind: body.error.status };
  if (format === 'anthropic') return { message: body.error.message, kind: `${body.type}/${body.error.type}` };
  return { message: body.error.message, kind: `${body.error.type}/${body.error.code}` };
}

const EXPECTED_KIND: Record<WireFormat, string> = {
  openai: 'new_api_error/convert_request_failed',
  gemini: 'INVALID_ARGUMENT',
  anthropic: 'error/invalid_request_error',
  responses: 'new_api_error/convert_request_failed',
};

describe('an endpoint a provider does not declare', () => {
  let s: TestServer;
  let upstream: MockUpstream;
  let key: string;
  let tokenId: number;
  let userId: number;
  const channelOf: Record<string, number> = {};

  beforeAll(async () => {
    registerProvider(chatOnlyVendor);
    registerProvider(embeddingsOnlyVendor);
    upstream = await MockUpstream.start();
    s = await startTestServer();
    await setOptions(s, { ModelRatio: Object.fromEntries(Object.values(MODELS).map((m) => [m, 1])) });
    const add = (type: number, models: string[], key = 'sk-upstream') =>
      addChannel(s, { type, baseUrl: upstream.url, key, models });
    channelOf[MODELS.anthropic] = await add(14, [MODELS.anthropic]);
    channelOf[MODELS.gemini] = await add(24, [MODELS.gemini]);
    channelOf[MODELS.bedrock] = await add(33, [MODELS.bedrock], 'AKIDTEST|secret|us-east-1');
    const vertex = await add(
      41,
      [MODELS.vertexClaude, MODELS.vertexGemini],
      JSON.stringify({ type: 'service_account', project_id: 'p', client_email: 'e@p.iam', private_key: 'unused' }),
    );
    channelOf[MODELS.vertexClaude] = vertex;
    channelOf[MODELS.vertexGemini] = vertex;
    channelOf[MODELS.chatOnly] = await add(CHAT_ONLY_TYPE, [MODELS.chatOnly]);
    channelOf[MODELS.embeddingsOnly] = await add(EMBEDDINGS_ONLY_TYPE, [MODELS.embeddingsOnly]);
    await channelsChanged(s);
    const u = await addUser(s, { quota: 10_000_000 });
    userId = u.id;
    const t = await addToken(s, u.id, { unlimited: false, remain: 5_000_000 });
    key = t.key;
    tokenId = t.id;
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
  });

  it.each(CASES)(
    '$provider refuses $mode from a $format client: its format, no upstream call, nothing charged or logged',
    async (c) => {
      expect((await adaptorFor(TYPE_OF[c.provider])).id).toBe(c.provider);
      const user = await userRow(s, userId);
      const token = await tokenRow(s, tokenId);
      const sent = upstream.requests.length;

      const r = await relayPost(s, c.path, key, c.body);

      expect(r.status).toBe(400);
      const got = refusal(c.format, await r.json());
      expect(got.message).toMatch(new RegExp(`^渠道 #${channelOf[c.model]} 的类型不支持 ${c.mode} 请求`));
      expect(got.kind).toBe(EXPECTED_KIND[c.format]);
      expect(upstream.requests.length).toBe(sent);
      await flushLogs(s);
      expect((await userRow(s, userId)).quota).toBe(user.quota);
      expect((await userRow(s, userId)).used_quota).toBe(user.used_quota);
      expect((await tokenRow(s, tokenId)).remain_quota).toBe(token.remain_quota);
      expect(await openHolds(s, userId)).toEqual([]);
      expect(await logsOf(s, userId)).toEqual([]);
    },
  );

  it('the test-only vendor still relays the chat it declares (the refusal is per endpoint, not per channel)', async () => {
    const r = await relayPost(s, '/v1/chat/completions', key, {
      model: MODELS.chatOnly,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(r.status).toBe(200);
    expect(upstream.requests.at(-1)!.path).toBe('/v1/chat/completions');
  });
});

describe('the OpenAI-compatible providers declare every endpoint a relay route asks of them', () => {
  const info = (type: number, mode: RelayInfo['mode']): RelayInfo => ({
    settings: {} as RelayInfo['settings'],
    channel: { type, key: 'k', baseUrl: 'https://example.com', other: '', organization: '' },
    mode,
    originModel: 'm',
    upstreamModel: 'm',
    isStream: false,
    clientFormat: mode.format ?? 'openai',
    clientHeaders: {},
  });

  it.each([
    ['openai', 1],
    ['openai', 45],
    ['azure', 3],
    ['ollama', 4],
  ] as const)('%s (channel type %i): every routed mode is declared', async (id, type) => {
    const provider = (await providerEntries()).find(([name]) => name === id)![1];
    for (const route of JSON_RELAY_ROUTES) expect(declares(provider, info(type, route.mode)), route.url).toBe(true);
  });

  it('the others refuse at least one routed endpoint (exercised above)', async () => {
    const refusing = (await providerEntries())
      .filter(([, p]) => JSON_RELAY_ROUTES.some((r) => !declares(p, info(p.types[0], r.mode))))
      .map(([id]) => id);
    // the OpenAI-like vendors of issue 43 declare only what they serve (Jina and Moka: embeddings; Submodel: chat), and
    // so do the signed ones (Baidu v1: chat and embeddings; Zhipu v3, Hunyuan, Spark: chat)
    expect(refusing.sort()).toEqual([
      'ali',
      'anthropic',
      'baidu',
      'bedrock',
      'cloudflare',
      'cohere',
      'coze',
      'dify',
      'gemini',
      'hunyuan',
      'jina',
      'minimax',
      'moka',
      'palm',
      'qianfan',
      'spark',
      'submodel',
      'vertex',
      'zhipu',
      'zhipuv3',
    ]);
    expect(declares(await adaptorFor(41), info(41, embeddingsMode))).toBe(false);
  });
});
