// A fake Anthropic API on 127.0.0.1:<ephemeral> for end-to-end relay tests: POST /v1/messages (JSON or SSE),
// POST /v1/messages/count_tokens, GET /v1/models[/{id}]. It checks headers and bodies the way Anthropic does
// (mock-anthropic-rules.ts) and answers deterministically from the request (mock-anthropic-answer.ts). Every request
// is recorded; `behave(req)` can script an answer, an error, a raw body, a delay or a broken stream instead.
import type http from 'node:http';
import { RecordingServer, sendJson, sleep, splitEvenly, splitText, type RecordedRequest } from './mock-http.js';
import { checkAnthropicBody, type AnthropicProblem, type RuleOptions } from './mock-anthropic-rules.js';
import {
  defaultAnthropicAnswer,
  promptTokens,
  usageFor,
  type AnthropicAnswer,
  type AnthropicBlock,
  type AnthropicUsage,
  type CacheSpec,
} from './mock-anthropic-answer.js';

export type { AnthropicAnswer, AnthropicBlock, AnthropicUsage, CacheSpec };

export const ANTHROPIC_MOCK_KEY = 'sk-ant-mock-key';

/** How a streamed answer is delivered; event counts include every SSE event (message_start is event 1). */
export interface AnthropicStreamScript {
  /** pieces a text or thinking block is split into (default 3) */
  pieces?: number;
  /** ms between events */
  intervalMs?: number;
  /** destroy the connection after this many events */
  breakAfterEvents?: number;
  /** send `event: error` with this error after this many events, then end the stream */
  errorAfterEvents?: { after: number; type: string; message: string };
  /** stop sending after this many events, keeping the connection open */
  hangAfterEvents?: number;
  /** message_delta usage: output_tokens only (default), or the full cumulative usage newer API versions send */
  deltaUsage?: 'output' | 'full';
}

export type AnthropicReply = (
  | { kind: 'default' }
  /** this answer instead of the derived one; usage defaults to the deterministic count */
  | {
      kind: 'answer';
      content: AnthropicBlock[];
      stop_reason?: AnthropicAnswer['stop_reason'];
      stop_sequence?: string | null;
      usage?: Partial<AnthropicUsage>;
    }
  | { kind: 'error'; status: number; type: string; message?: string; headers?: Record<string, string> }
  | { kind: 'raw'; status: number; body: string; contentType?: string }
  | { kind: 'destroy' }
) & { delayMs?: number; stream?: AnthropicStreamScript };

export interface AnthropicModel {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
}

export const DEFAULT_ANTHROPIC_MODELS: AnthropicModel[] = [
  { type: 'model', id: 'claude-opus-4-6', display_name: 'Claude Opus 4.6', created_at: '2026-02-05T00:00:00Z' },
  { type: 'model', id: 'claude-sonnet-4-6', display_name: 'Claude Sonnet 4.6', created_at: '2026-02-17T00:00:00Z' },
  {
    type: 'model',
    id: 'claude-haiku-4-5-20251001',
    display_name: 'Claude Haiku 4.5',
    created_at: '2025-10-01T00:00:00Z',
  },
];

const DEFAULT_ERROR_MESSAGES: Record<string, string> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'Not found',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  api_error: 'Internal server error',
  overloaded_error: 'Overloaded',
};

export class MockAnthropic {
  /** the one x-api-key accepted */
  apiKey = ANTHROPIC_MOCK_KEY;
  /** check headers and bodies as Anthropic does; false lets a scripted reply answer anything */
  validate = true;
  rules: RuleOptions = {};
  /** prompt-cache usage the answers report */
  cache: CacheSpec = {};
  /** send anthropic-ratelimit-* headers */
  rateLimitHeaders = false;
  models: AnthropicModel[] = [...DEFAULT_ANTHROPIC_MODELS];
  behave: (req: RecordedRequest) => AnthropicReply = () => ({ kind: 'default' });
  private counter = 0;

  private constructor(private readonly server: RecordingServer) {}

  static async start(): Promise<MockAnthropic> {
    let self: MockAnthropic | undefined;
    const server = await RecordingServer.start((req, res) => self!.handle(req, res));
    self = new MockAnthropic(server);
    return self;
  }

  get url(): string {
    return this.server.url;
  }
  get port(): number {
    return this.server.port;
  }
  get requests(): RecordedRequest[] {
    return this.server.requests;
  }
  get closedEarly(): number {
    return this.server.closedEarly;
  }

  reset(): void {
    this.server.requests.length = 0;
    this.server.closedEarly = 0;
    this.apiKey = ANTHROPIC_MOCK_KEY;
    this.validate = true;
    this.rules = {};
    this.cache = {};
    this.rateLimitHeaders = false;
    this.models = [...DEFAULT_ANTHROPIC_MODELS];
    this.behave = () => ({ kind: 'default' });
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private nextId(prefix: string): string {
    this.counter++;
    // Anthropic ids are a prefix and 24 base62 characters starting with "01"
    return `${prefix}_01Mock${String(this.counter).padStart(18, '0')}`;
  }

  private baseHeaders(): Record<string, string> {
    const h: Record<string, string> = { 'request-id': this.nextId('req') };
    if (this.rateLimitHeaders) {
      const reset = '2030-01-01T00:00:00Z';
      Object.assign(h, {
        'anthropic-ratelimit-requests-limit': '4000',
        'anthropic-ratelimit-requests-remaining': '3999',
        'anthropic-ratelimit-requests-reset': reset,
        'anthropic-ratelimit-tokens-limit': '400000',
        'anthropic-ratelimit-tokens-remaining': '399000',
        'anthropic-ratelimit-tokens-reset': reset,
      });
    }
    return h;
  }

  private sendError(res: http.ServerResponse, p: AnthropicProblem, extra: Record<string, string> = {}): void {
    const headers = this.baseHeaders();
    // Anthropic tells its SDKs whether a retry can help: yes for rate limits and server-side trouble
    headers['x-should-retry'] = p.status === 429 || p.status >= 500 ? 'true' : 'false';
    if (p.status === 429) headers['retry-after'] = '1';
    const message = p.message || DEFAULT_ERROR_MESSAGES[p.type] || 'Error';
    sendJson(
      res,
      p.status,
      { type: 'error', error: { type: p.type, message }, request_id: headers['request-id'] },
      { ...headers, ...extra },
    );
  }

  private async handle(req: RecordedRequest, res: http.ServerResponse): Promise<void> {
    const path = req.path.split('?')[0];
    const route = routeOf(req.method, path);
    if (!route) return this.sendError(res, { status: 404, type: 'not_found_error', message: 'Not Found' });
    if (this.validate) {
      const problem = this.checkHeaders(req) ?? this.checkBody(req, route.name);
      if (problem) return this.sendError(res, problem);
    }
    if (route.name === 'models') return this.listModels(req, res);
    if (route.name === 'model') {
      const model = this.models.find((m) => m.id === route.id);
      if (!model) return this.sendError(res, { status: 404, type: 'not_found_error', message: `model: ${route.id}` });
      return sendJson(res, 200, model, this.baseHeaders());
    }
    const reply = this.behave(req);
    if (reply.delayMs) await sleep(reply.delayMs);
    if (res.destroyed) return;
    if (reply.kind === 'destroy') {
      res.socket?.destroy();
      return;
    }
    if (reply.kind === 'raw') {
      res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'text/plain', ...this.baseHeaders() });
      res.end(reply.body);
      return;
    }
    if (reply.kind === 'error')
      return this.sendError(
        res,
        { status: reply.status, type: reply.type, message: reply.message ?? '' },
        reply.headers,
      );
    if (route.name === 'count_tokens')
      return sendJson(res, 200, { input_tokens: promptTokens(req.body) }, this.baseHeaders());
    const answer = this.answerFor(req.body, reply);
    const message = { id: this.nextId('msg'), type: 'message', role: 'assistant', model: req.body.model, ...answer };
    if (req.body?.stream === true) return this.stream(res, message, reply.stream ?? {});
    sendJson(res, 200, message, this.baseHeaders());
  }

  private checkHeaders(req: RecordedRequest): AnthropicProblem | null {
    const key = req.headers['x-api-key'];
    // Anthropic takes API keys only in x-api-key; an Authorization: Bearer is not a substitute
    if (key === undefined)
      return { status: 401, type: 'authentication_error', message: 'x-api-key header is required' };
    if (key !== this.apiKey) return { status: 401, type: 'authentication_error', message: 'invalid x-api-key' };
    if (req.headers['anthropic-version'] === undefined)
      return { status: 400, type: 'invalid_request_error', message: 'anthropic-version: header is required' };
    return null;
  }

  private checkBody(req: RecordedRequest, route: RouteName): AnthropicProblem | null {
    if (route !== 'messages' && route !== 'count_tokens') return null;
    if (req.body === null)
      return {
        status: 400,
        type: 'invalid_request_error',
        message: 'There was an error parsing the body of your request. Please make sure it is valid JSON.',
      };
    return checkAnthropicBody(req.body, route, this.rules);
  }

  private answerFor(body: any, reply: AnthropicReply): AnthropicAnswer {
    if (reply.kind !== 'answer') return defaultAnthropicAnswer(body, { toolUseId: this.nextId('toolu') }, this.cache);
    const usage = { ...usageFor(body, reply.content, this.cache), ...reply.usage };
    const stop_reason =
      reply.stop_reason ?? (reply.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
    return { content: reply.content, stop_reason, stop_sequence: reply.stop_sequence ?? null, usage };
  }

  private listModels(req: RecordedRequest, res: http.ServerResponse): void {
    const query = new URL(req.path, 'http://mock').searchParams;
    const limit = Number(query.get('limit') ?? 20);
    let start = 0;
    const after = query.get('after_id');
    if (after) start = this.models.findIndex((m) => m.id === after) + 1;
    const data = this.models.slice(start, start + limit);
    sendJson(
      res,
      200,
      {
        data,
        has_more: start + limit < this.models.length,
        first_id: data[0]?.id ?? null,
        last_id: data[data.length - 1]?.id ?? null,
      },
      this.baseHeaders(),
    );
  }

  private async stream(res: http.ServerResponse, message: any, script: AnthropicStreamScript): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...this.baseHeaders(),
    });
    const events = anthropicStreamEvents(message, script);
    for (let i = 0; i < events.length; i++) {
      if (i > 0 && script.intervalMs) await sleep(script.intervalMs);
      if (res.destroyed) return;
      if (script.breakAfterEvents !== undefined && i >= script.breakAfterEvents) {
        res.socket?.destroy();
        return;
      }
      if (script.hangAfterEvents !== undefined && i >= script.hangAfterEvents) return;
      if (script.errorAfterEvents && i >= script.errorAfterEvents.after) {
        const { type, message: text } = script.errorAfterEvents;
        res.end(sse('error', { type: 'error', error: { type, message: text } }));
        return;
      }
      res.write(sse(events[i].event, events[i].data));
    }
    res.end();
  }
}

type RouteName = 'messages' | 'count_tokens' | 'models' | 'model';

function routeOf(method: string, path: string): { name: RouteName; id?: string } | null {
  if (method === 'POST' && path === '/v1/messages') return { name: 'messages' };
  if (method === 'POST' && path === '/v1/messages/count_tokens') return { name: 'count_tokens' };
  if (method === 'GET' && path === '/v1/models') return { name: 'models' };
  const model = /^\/v1\/models\/([^/]+)$/.exec(path);
  if (method === 'GET' && model) return { name: 'model', id: decodeURIComponent(model[1]) };
  return null;
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * A message as Anthropic streams it: message_start (empty content, input usage, output_tokens 1), per block a
 * content_block_start / deltas / content_block_stop (a ping after the first start), then message_delta with the
 * stop reason and output usage, and message_stop.
 */
export function anthropicStreamEvents(message: any, script: AnthropicStreamScript = {}) {
  const pieces = script.pieces ?? 3;
  const usage: AnthropicUsage = message.usage;
  const events: { event: string; data: unknown }[] = [];
  const push = (event: string, data: Record<string, unknown>) => events.push({ event, data: { type: event, ...data } });
  push('message_start', {
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  (message.content as AnthropicBlock[]).forEach((block, index) => {
    const delta = (d: Record<string, unknown>) => push('content_block_delta', { index, delta: d });
    if (block.type === 'text') {
      push('content_block_start', { index, content_block: { type: 'text', text: '' } });
      if (index === 0) push('ping', {});
      for (const text of splitText(block.text, pieces)) delta({ type: 'text_delta', text });
    } else if (block.type === 'thinking') {
      push('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      if (index === 0) push('ping', {});
      for (const thinking of splitText(block.thinking, pieces)) delta({ type: 'thinking_delta', thinking });
      delta({ type: 'signature_delta', signature: block.signature });
    } else if (block.type === 'redacted_thinking') {
      push('content_block_start', { index, content_block: block });
      if (index === 0) push('ping', {});
    } else {
      push('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      if (index === 0) push('ping', {});
      delta({ type: 'input_json_delta', partial_json: '' });
      for (const partial_json of splitEvenly(JSON.stringify(block.input), pieces))
        delta({ type: 'input_json_delta', partial_json });
    }
    push('content_block_stop', { index });
  });
  const deltaUsage =
    script.deltaUsage === 'full'
      ? {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
          output_tokens: usage.output_tokens,
        }
      : { output_tokens: usage.output_tokens };
  push('message_delta', {
    delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
    usage: deltaUsage,
  });
  push('message_stop', {});
  return events;
}
