// The shared set-up of the format tests beyond text (tools, thinking, images, parameters, cache billing): one relay
// with a channel per provider (OpenAI-compatible, Anthropic, Gemini, Bedrock Claude, Vertex Gemini and Vertex
// Claude), a user and a token, the official SDKs as clients, and per provider the last request its mock received.
// The mocks answer like their vendor would for the conversation they get (a tool call when tools are declared, the
// final answer once a tool result comes back, thinking when thinking is asked for); a test scripts anything else.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { expect } from 'vitest';
import type OpenAI from 'openai';
import type { TestDbKind } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { defaultBehaviour, MockUpstream, type Behaviour, type RecordedRequest } from '../helpers/mock-upstream.js';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../helpers/mock-anthropic.js';
import { mockSignature } from '../helpers/mock-anthropic-rules.js';
import { GEMINI_MOCK_KEY, MockGemini } from '../helpers/mock-gemini.js';
import { MockBedrock } from '../helpers/mock-bedrock.js';
import { MockVertex, type GeminiAnswer as VertexGeminiAnswer } from '../helpers/mock-vertex.js';
import type { ClaudeAnswer } from '../helpers/claude-mock-replies.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  flushLogs,
  logsOf,
  setOptions,
  userRow,
} from '../relay/fixtures.js';

/** The model each provider serves. The Gemini models think (2.5), so thinking can be asked of every provider. */
export const TARGETS = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-3-5-sonnet-20241022',
  gemini: 'gemini-2.5-flash',
  bedrock: 'claude-3-haiku-20240307',
  'vertex-gemini': 'gemini-2.5-pro',
  'vertex-claude': 'claude-sonnet-4-20250514',
} as const;
export type Target = keyof typeof TARGETS;
export const ALL_TARGETS = Object.keys(TARGETS) as Target[];

/** The wire format a provider's upstream speaks. */
export type Family = 'openai' | 'claude' | 'gemini';
export function familyOf(t: Target): Family {
  if (t === 'openai') return 'openai';
  return t === 'gemini' || t === 'vertex-gemini' ? 'gemini' : 'claude';
}

export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** The ratios every target is billed at, so a test can work the charge out by hand. */
export const RATIOS = { model: 1, completion: 2, cache: 0.1, cacheCreation: 1.25 };

/** What the OpenAI mock answers with; `defaultOpenai` derives it from the request. */
export interface OpenaiScript {
  content?: string | null;
  reasoning?: string;
  toolCall?: { id: string; name: string; arguments: string };
  finish?: 'stop' | 'length' | 'tool_calls';
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details?: { cached_tokens: number };
    completion_tokens_details?: { reasoning_tokens: number };
  };
}

const lastOf = <T>(xs: T[]) => xs[xs.length - 1];

/** The OpenAI mock's default: the final answer after a tool result, a tool call when tools are declared, else text
 * (with reasoning_content, as DeepSeek-style reasoning models send it, when reasoning was asked for). */
export function defaultOpenai(body: any): OpenaiScript | undefined {
  const last = lastOf(body?.messages ?? []) as any;
  if (last?.role === 'tool') return { content: `The tool said: ${textOfContent(last.content)}`, finish: 'stop' };
  const tools = body?.tools;
  if (Array.isArray(tools) && tools.length)
    return {
      content: null,
      toolCall: { id: 'call_w1', name: tools[0].function.name, arguments: '{"city":"Paris"}' },
      finish: 'tool_calls',
    };
  if (body?.reasoning_effort)
    return { reasoning: 'Thinking about the greeting', content: 'Hello from OpenAI after thinking', finish: 'stop' };
  return undefined;
}

function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: any) => p?.text ?? '').join('');
  return '';
}

/** An OpenAI chat answer for a script, whole or streamed (deltas: reasoning, content, tool call pieces). */
export function openaiReply(req: RecordedRequest, script: OpenaiScript): Behaviour {
  const model = req.body?.model ?? 'unknown';
  const usage = script.usage ?? { prompt_tokens: 20, completion_tokens: 9 };
  const fullUsage = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  const call = script.toolCall && {
    id: script.toolCall.id,
    type: 'function',
    function: { name: script.toolCall.name, arguments: script.toolCall.arguments },
  };
  const finish = script.finish ?? (call ? 'tool_calls' : 'stop');
  if (!req.body.stream) {
    const message: Record<string, unknown> = { role: 'assistant', content: script.content ?? null };
    if (script.reasoning) message.reasoning_content = script.reasoning;
    if (call) message.tool_calls = [call];
    return {
      kind: 'json',
      body: {
        id: 'chatcmpl-w',
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage: fullUsage,
      },
    };
  }
  const chunk = (delta: unknown, finishReason: string | null, u?: unknown) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-w', object: 'chat.completion.chunk', created: 1, model, choices: u ? [] : [{ index: 0, delta, finish_reason: finishReason }], ...(u ? { usage: u } : {}) })}\n\n`;
  let body = chunk({ role: 'assistant', content: '' }, null);
  if (script.reasoning) for (const piece of halves(script.reasoning)) body += chunk({ reasoning_content: piece }, null);
  if (script.content) for (const piece of halves(script.content)) body += chunk({ content: piece }, null);
  if (call) {
    body += chunk(
      {
        tool_calls: [
          { index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
        ],
      },
      null,
    );
    for (const piece of halves(call.function.arguments))
      body += chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null);
  }
  body += chunk({}, finish);
  if (req.body.stream_options?.include_usage) body += chunk(null, null, fullUsage);
  body += 'data: [DONE]\n\n';
  return { kind: 'raw', status: 200, body, contentType: 'text/event-stream' };
}

function halves(s: string): string[] {
  const at = Math.ceil(s.length / 2);
  return [s.slice(0, at), s.slice(at)].filter(Boolean);
}

/** Claude on Bedrock or Vertex: the final answer after a tool result, a tool call when tools are declared, thinking
 * when thinking is on. */
export function defaultClaudeCloud(body: any, vendor: string): ClaudeAnswer {
  const thinking =
    body?.thinking?.type === 'enabled'
      ? { thinking: 'Thinking about the greeting', signature: mockSignature('Thinking about the greeting') }
      : undefined;
  const last = lastOf(body?.messages ?? []) as any;
  const result = Array.isArray(last?.content) ? last.content.find((b: any) => b?.type === 'tool_result') : undefined;
  if (result) return { kind: 'text', text: `The tool said: ${textOfContent(result.content)}`, thinking };
  const tool = body?.tools?.[0]?.name;
  if (tool) return { kind: 'tool_use', name: tool, input: { city: 'Paris' }, thinking };
  return { kind: 'text', text: `Hello from Claude on ${vendor}!`, thinking };
}

/** Gemini on Vertex: the same, with a thought summary when thoughts are asked for. */
export function defaultVertexGemini(body: any): VertexGeminiAnswer {
  const thinking = body?.generationConfig?.thinkingConfig;
  const thoughts =
    thinking?.thinkingBudget !== 0
      ? {
          thoughtsTokens: 4,
          thoughtSignature: 'c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0',
          ...(thinking?.includeThoughts ? { thought: 'Thinking about the greeting' } : {}),
        }
      : {};
  const last = lastOf(body?.contents ?? []) as any;
  const response = (last?.parts ?? []).find((p: any) => p.functionResponse)?.functionResponse;
  if (response) return { kind: 'text', text: `The tool said: ${JSON.stringify(response.response)}`, ...thoughts };
  const fn = body?.tools?.[0]?.functionDeclarations?.[0]?.name;
  if (fn) return { kind: 'function_call', name: fn, args: { city: 'Paris' }, ...thoughts };
  return { kind: 'text', text: 'Hello from Gemini on Vertex!', ...thoughts };
}

export interface World {
  s: TestServer;
  openai: MockUpstream;
  anthropic: MockAnthropic;
  gemini: MockGemini;
  bedrock: MockBedrock;
  vertex: MockVertex;
  key: string;
  userId: number;
  /** scripts for the upstreams whose default is derived (undefined: the default) */
  scriptOpenai?: (body: any) => OpenaiScript | undefined;
  scriptClaudeCloud?: (body: any) => ClaudeAnswer | undefined;
  scriptVertexGemini?: (body: any) => VertexGeminiAnswer | undefined;
}

export async function startWorld(kind: TestDbKind): Promise<World> {
  const [openai, anthropic, gemini, bedrock, vertex] = await Promise.all([
    MockUpstream.start(),
    MockAnthropic.start(),
    MockGemini.start(),
    MockBedrock.start({ accessKeyId: 'AKIDWORLD', secretAccessKey: 'world-secret', region: 'us-east-1' }),
    MockVertex.start(),
  ]);
  const w = { openai, anthropic, gemini, bedrock, vertex } as World;
  openai.behave = (req) => {
    if (!req.path.includes('chat/completions')) return defaultBehaviour(req);
    const script = w.scriptOpenai?.(req.body) ?? defaultOpenai(req.body);
    return script ? openaiReply(req, script) : defaultBehaviour(req);
  };
  bedrock.answer = (req) => w.scriptClaudeCloud?.(req.body) ?? defaultClaudeCloud(req.body, 'Bedrock');
  vertex.answer = (req) =>
    req.publisher === 'anthropic'
      ? { kind: 'claude', answer: w.scriptClaudeCloud?.(req.body) ?? defaultClaudeCloud(req.body, 'Vertex') }
      : { kind: 'gemini', answer: w.scriptVertexGemini?.(req.body) ?? defaultVertexGemini(req.body) };

  w.s = await startTestServer({ kind, env: { VERTEX_TOKEN_URL: vertex.tokenUrl } });
  const models = Object.values(TARGETS);
  const each = (v: number) => Object.fromEntries(models.map((m) => [m, v]));
  await setOptions(w.s, {
    ModelRatio: each(RATIOS.model),
    CompletionRatio: each(RATIOS.completion),
    CacheRatio: each(RATIOS.cache),
    CreateCacheRatio: each(RATIOS.cacheCreation),
  });
  await addChannel(w.s, { type: 1, baseUrl: openai.url, models: [TARGETS.openai] });
  await addChannel(w.s, { type: 14, baseUrl: anthropic.url, key: ANTHROPIC_MOCK_KEY, models: [TARGETS.anthropic] });
  await addChannel(w.s, { type: 24, baseUrl: gemini.url, key: GEMINI_MOCK_KEY, models: [TARGETS.gemini] });
  await addChannel(w.s, {
    type: 33,
    baseUrl: bedrock.url,
    key: 'AKIDWORLD|world-secret|us-east-1',
    models: [TARGETS.bedrock],
  });
  await addChannel(w.s, {
    type: 41,
    baseUrl: vertex.url,
    key: vertex.newServiceAccount(),
    other: 'us-central1',
    models: [TARGETS['vertex-gemini'], TARGETS['vertex-claude']],
  });
  await channelsChanged(w.s);
  const u = await addUser(w.s, { quota: 100_000_000 });
  w.userId = u.id;
  w.key = (await addToken(w.s, u.id)).key;
  return w;
}

export async function stopWorld(w: World | undefined): Promise<void> {
  if (!w) return;
  await w.s?.close();
  await Promise.all([w.openai.close(), w.anthropic.close(), w.gemini.close(), w.bedrock.close(), w.vertex.close()]);
}

/** Back to the derived answers, between tests. */
export function resetScripts(w: World): void {
  w.scriptOpenai = undefined;
  w.scriptClaudeCloud = undefined;
  w.scriptVertexGemini = undefined;
  w.anthropic.behave = () => ({ kind: 'default' });
  w.anthropic.cache = {};
  w.gemini.behave = () => ({ kind: 'default' });
  w.gemini.cachedTokens = 0;
}

export const openaiClient = (w: World): OpenAI => client(w.s, w.key);
export const claudeClient = (w: World) => new Anthropic({ apiKey: `sk-${w.key}`, baseURL: w.s.url, maxRetries: 0 });
export const googleClient = (w: World) => new GoogleGenAI({ apiKey: `sk-${w.key}`, httpOptions: { baseUrl: w.s.url } });

/** How many model calls the provider's mock has received so far. */
export function callsTo(w: World, t: Target): number {
  return modelCalls(w, t).length;
}

function modelCalls(w: World, t: Target): { body: any; path: string }[] {
  switch (t) {
    case 'openai':
      return w.openai.requests.filter((r) => r.path.includes('chat/completions') || r.path === '/v1/responses');
    case 'anthropic':
      return w.anthropic.requests.filter((r) => r.path.split('?')[0] === '/v1/messages');
    case 'gemini':
      return w.gemini.requests.filter((r) => /:(stream)?generateContent/i.test(r.path));
    case 'bedrock':
      return w.bedrock.requests;
    case 'vertex-gemini':
      return w.vertex.requests.filter((r) => r.publisher === 'google');
    case 'vertex-claude':
      return w.vertex.requests.filter((r) => r.publisher === 'anthropic');
  }
}

/** The body of the last model call the provider's mock received. */
export function sentTo(w: World, t: Target): any {
  const calls = modelCalls(w, t);
  expect(calls.length, `${t} received no model call`).toBeGreaterThan(0);
  return calls[calls.length - 1].body;
}

/** The balance once every earlier request has settled (settlements are batched). */
export async function balance(w: World): Promise<number> {
  await flushLogs(w.s);
  return (await userRow(w.s, w.userId)).quota;
}

/** The last consume log, once settled. */
export async function lastLog(w: World) {
  await flushLogs(w.s);
  const logs = await logsOf(w.s, w.userId);
  return logs[logs.length - 1];
}

/**
 * The last consume log charges its tokens at RATIOS (cache reads at the cache ratio, cache writes at the
 * cache-creation ratio) and completion at the model's completion ratio (fixed for some models), and the balance moved by exactly that.
 */
export async function expectBilled(w: World, model: string, before: number) {
  const row = await lastLog(w);
  expect(row.model_name).toBe(model);
  const o = row.otherJson;
  const cached = Number(o.cache_tokens ?? 0);
  const creation = Number(o.cache_creation_tokens ?? 0);
  const tokens =
    row.prompt_tokens -
    cached +
    cached * RATIOS.cache +
    creation * RATIOS.cacheCreation +
    row.completion_tokens * o.completion_ratio;
  expect(o.cache_ratio).toBe(RATIOS.cache);
  if (creation) expect(o.cache_creation_ratio).toBe(RATIOS.cacheCreation);
  expect(Math.abs(row.quota - tokens * RATIOS.model)).toBeLessThanOrEqual(1);
  expect(before - (await userRow(w.s, w.userId)).quota).toBe(row.quota);
  return row;
}
