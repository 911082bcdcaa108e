// A fake Gemini API (generativelanguage) on 127.0.0.1:<ephemeral> for end-to-end relay tests:
// POST /{version}/models/{model}:generateContent | :streamGenerateContent (SSE with ?alt=sse, else one JSON array
// sent in pieces) | :countTokens | :embedContent | :batchEmbedContents, GET /{version}/models[/{model}]. It checks
// the key and the body the way Google does (mock-gemini-rules.ts) and answers deterministically from the request
// (mock-gemini-answer.ts). Every request is recorded; `behave(req)` can script an answer, an error, a delay or a
// broken stream instead.
import type http from 'node:http';
import { RecordingServer, sendJson, sleep, splitText, type RecordedRequest } from './mock-http.js';
import {
  checkBatchEmbedBody,
  checkCountTokensBody,
  checkEmbedBody,
  checkGenerateBody,
  field,
  type GoogleProblem,
} from './mock-gemini-rules.js';
import {
  defaultGeminiAnswer,
  embeddingFor,
  partTokens,
  promptTokenCount,
  thinkingPlan,
  thoughtText,
  usageMetadata,
  type GeminiAnswer,
  type GeminiFinishReason,
  type GeminiPart,
  type GeminiUsage,
} from './mock-gemini-answer.js';

export type { GeminiAnswer, GeminiFinishReason, GeminiPart, GeminiUsage };

export const GEMINI_MOCK_KEY = 'AIzaSy-mock-gemini-key';

/** How a streamed answer is delivered; chunk counts are GenerateContentResponse objects. */
export interface GeminiStreamScript {
  /** pieces the text is split into (default 3) */
  pieces?: number;
  /** ms between chunks */
  intervalMs?: number;
  /** destroy the connection after this many chunks */
  breakAfterChunks?: number;
  /** stop sending after this many chunks, keeping the connection open */
  hangAfterChunks?: number;
  /** send an error object in place of the next chunk after this many chunks, then end */
  errorAfterChunks?: { after: number; code: number; status: string; message: string };
}

export type GeminiReply = (
  | { kind: 'default' }
  /** these parts instead of the derived ones; usage defaults to the deterministic count */
  | { kind: 'answer'; parts: GeminiPart[]; finishReason?: GeminiFinishReason; usage?: Partial<GeminiUsage> }
  | { kind: 'error'; code: number; status?: string; message?: string; details?: unknown[] }
  | { kind: 'raw'; status: number; body: string; contentType?: string }
  | { kind: 'destroy' }
) & { delayMs?: number; stream?: GeminiStreamScript };

export interface GeminiModel {
  name: string;
  version: string;
  displayName: string;
  description: string;
  inputTokenLimit: number;
  outputTokenLimit: number;
  supportedGenerationMethods: string[];
  temperature?: number;
  topP?: number;
  topK?: number;
  maxTemperature?: number;
  thinking?: boolean;
}

const CHAT_METHODS = ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'];
const chatModel = (id: string, displayName: string, thinking: boolean): GeminiModel => ({
  name: `models/${id}`,
  version: '001',
  displayName,
  description: `${displayName} (mock)`,
  inputTokenLimit: 1048576,
  outputTokenLimit: thinking ? 65536 : 8192,
  supportedGenerationMethods: CHAT_METHODS,
  temperature: 1,
  topP: 0.95,
  topK: 64,
  maxTemperature: 2,
  ...(thinking ? { thinking: true } : {}),
});
const embeddingModel = (id: string, displayName: string): GeminiModel => ({
  name: `models/${id}`,
  version: '001',
  displayName,
  description: `${displayName} (mock)`,
  inputTokenLimit: 2048,
  outputTokenLimit: 1,
  supportedGenerationMethods: ['embedContent', 'countTextTokens', 'countTokens', 'asyncBatchEmbedContent'],
});

export const DEFAULT_GEMINI_MODELS: GeminiModel[] = [
  chatModel('gemini-2.5-pro', 'Gemini 2.5 Pro', true),
  chatModel('gemini-2.5-flash', 'Gemini 2.5 Flash', true),
  chatModel('gemini-2.0-flash', 'Gemini 2.0 Flash', false),
  chatModel('gemini-1.5-flash', 'Gemini 1.5 Flash', false),
  embeddingModel('gemini-embedding-001', 'Gemini Embedding 001'),
  embeddingModel('text-embedding-004', 'Text Embedding 004'),
];

const DEFAULT_ERRORS: Record<number, { status: string; message: string }> = {
  400: { status: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' },
  403: { status: 'PERMISSION_DENIED', message: 'The caller does not have permission' },
  404: { status: 'NOT_FOUND', message: 'Requested entity was not found.' },
  429: { status: 'RESOURCE_EXHAUSTED', message: 'Resource has been exhausted (e.g. check quota).' },
  500: { status: 'INTERNAL', message: 'An internal error has occurred. Please retry or report in the docs.' },
  503: { status: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' },
  504: { status: 'DEADLINE_EXCEEDED', message: 'The request timed out. Please try again.' },
};

const API_KEY_INVALID: GoogleProblem = {
  code: 400,
  status: 'INVALID_ARGUMENT',
  message: 'API key not valid. Please pass a valid API key.',
  details: [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'API_KEY_INVALID',
      domain: 'googleapis.com',
      metadata: { service: 'generativelanguage.googleapis.com' },
    },
    {
      '@type': 'type.googleapis.com/google.rpc.LocalizedMessage',
      locale: 'en-US',
      message: 'API key not valid. Please pass a valid API key.',
    },
  ],
};

const KEY_MISSING: GoogleProblem = {
  code: 403,
  status: 'PERMISSION_DENIED',
  message:
    "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
};

const JSON_TYPE = 'application/json; charset=UTF-8';

interface Route {
  version: string;
  /** model id without the `models/` prefix; absent for the list */
  model?: string;
  method:
    | 'list'
    | 'get'
    | 'generateContent'
    | 'streamGenerateContent'
    | 'countTokens'
    | 'embedContent'
    | 'batchEmbedContents';
}

function routeOf(httpMethod: string, path: string): Route | null {
  const action = /^\/(v1|v1beta|v1alpha)\/models\/([^/:]+):(\w+)$/.exec(path);
  if (action && httpMethod === 'POST') {
    const known = ['generateContent', 'streamGenerateContent', 'countTokens', 'embedContent', 'batchEmbedContents'];
    if (!known.includes(action[3])) return null;
    return { version: action[1], model: decodeURIComponent(action[2]), method: action[3] as Route['method'] };
  }
  if (httpMethod !== 'GET') return null;
  const list = /^\/(v1|v1beta|v1alpha)\/models$/.exec(path);
  if (list) return { version: list[1], method: 'list' };
  const get = /^\/(v1|v1beta|v1alpha)\/models\/([^/:]+)$/.exec(path);
  if (get) return { version: get[1], model: decodeURIComponent(get[2]), method: 'get' };
  return null;
}

export class MockGemini {
  /** the one API key accepted, from `x-goog-api-key` or `?key=` */
  apiKey = GEMINI_MOCK_KEY;
  /** check keys and bodies as Google does; false lets a scripted reply answer anything */
  validate = true;
  /** refuse models missing from `models` with Google's 404 (off: any model name answers) */
  strictModels = false;
  /** cachedContentTokenCount the answers report (part of promptTokenCount, as Google counts it) */
  cachedTokens = 0;
  models: GeminiModel[] = [...DEFAULT_GEMINI_MODELS];
  behave: (req: RecordedRequest) => GeminiReply = () => ({ kind: 'default' });
  private counter = 0;

  private constructor(private readonly server: RecordingServer) {}

  static async start(): Promise<MockGemini> {
    let self: MockGemini | undefined;
    const server = await RecordingServer.start((req, res) => self!.handle(req, res));
    self = new MockGemini(server);
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
    this.apiKey = GEMINI_MOCK_KEY;
    this.validate = true;
    this.strictModels = false;
    this.cachedTokens = 0;
    this.models = [...DEFAULT_GEMINI_MODELS];
    this.behave = () => ({ kind: 'default' });
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(req: RecordedRequest, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.path, 'http://mock');
    const route = routeOf(req.method, url.pathname);
    // a streamGenerateContent without alt=sse answers (errors too) as a JSON array
    const arrayFraming = route?.method === 'streamGenerateContent' && url.searchParams.get('alt') !== 'sse';
    const fail = (p: GoogleProblem) => sendGoogleError(res, p, arrayFraming);
    if (!route) return fail({ code: 404, status: 'NOT_FOUND', message: `Method not found: ${url.pathname}` });
    if (this.validate) {
      const key = req.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? undefined;
      if (key === undefined) return fail(KEY_MISSING);
      if (key !== this.apiKey) return fail(API_KEY_INVALID);
      const problem = this.checkModel(route) ?? this.checkBody(req, route);
      if (problem) return fail(problem);
    }
    if (route.method === 'list') return this.listModels(url, res);
    if (route.method === 'get') {
      const model = this.models.find((m) => m.name === `models/${route.model}`);
      if (!model)
        return fail({
          code: 404,
          status: 'NOT_FOUND',
          message: `models/${route.model} is not found for API version ${route.version}`,
        });
      return sendJson(res, 200, model, {}, JSON_TYPE);
    }
    const reply = this.behave(req);
    if (reply.delayMs) await sleep(reply.delayMs);
    if (res.destroyed) return;
    if (reply.kind === 'destroy') {
      res.socket?.destroy();
      return;
    }
    if (reply.kind === 'raw') {
      res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'text/plain' });
      res.end(reply.body);
      return;
    }
    if (reply.kind === 'error') {
      const fallback = DEFAULT_ERRORS[reply.code] ?? { status: 'UNKNOWN', message: 'Unknown error' };
      return fail({
        code: reply.code,
        status: reply.status ?? fallback.status,
        message: reply.message ?? fallback.message,
        ...(reply.details ? { details: reply.details } : {}),
      });
    }
    const model = route.model!;
    if (route.method === 'countTokens') return this.countTokens(req.body, res);
    if (route.method === 'embedContent') {
      const values = embeddingFor(textOf(field(req.body, 'content')), dimensionsFor(model, req.body));
      return sendJson(res, 200, { embedding: { values } }, {}, JSON_TYPE);
    }
    if (route.method === 'batchEmbedContents') {
      const embeddings = (req.body.requests as any[]).map((r) => ({
        values: embeddingFor(textOf(field(r, 'content')), dimensionsFor(model, r)),
      }));
      return sendJson(res, 200, { embeddings }, {}, JSON_TYPE);
    }
    const { answer, usage } = this.answerFor(req.body, model, reply);
    const responseId = `mock-gemini-${++this.counter}`;
    if (route.method === 'generateContent') {
      const body = {
        candidates: [{ content: { parts: answer.parts, role: 'model' }, finishReason: answer.finishReason, index: 0 }],
        usageMetadata: usage,
        modelVersion: model,
        responseId,
      };
      return sendJson(res, 200, body, {}, JSON_TYPE);
    }
    const chunks = geminiStreamChunks(answer, usage, { model, responseId, pieces: reply.stream?.pieces ?? 3 });
    return writeStream(res, chunks, arrayFraming ? 'json-array' : 'sse', reply.stream ?? {});
  }

  /** One page of the list: `pageSize` (Google's default 50, at most 1000) and the opaque `pageToken` it handed out. */
  private listModels(url: URL, res: http.ServerResponse): void {
    const asked = Number(url.searchParams.get('pageSize') ?? '') || 50;
    const size = Math.min(Math.max(asked, 1), 1000);
    const token = url.searchParams.get('pageToken');
    const start = token
      ? Number(
          Buffer.from(token, 'base64url')
            .toString('utf8')
            .replace(/^offset:/, ''),
        ) || 0
      : 0;
    const models = this.models.slice(start, start + size);
    const next = start + size < this.models.length ? Buffer.from(`offset:${start + size}`).toString('base64url') : null;
    sendJson(res, 200, next ? { models, nextPageToken: next } : { models }, {}, JSON_TYPE);
  }

  private checkModel(route: Route): GoogleProblem | null {
    if (!route.model || route.method === 'get') return null;
    const known = this.models.find((m) => m.name === `models/${route.model}`);
    const method = route.method === 'streamGenerateContent' ? 'generateContent' : route.method;
    const methods = known?.supportedGenerationMethods ?? [];
    // batchEmbedContents goes with embedContent
    const supported = methods.includes(method) || (method === 'batchEmbedContents' && methods.includes('embedContent'));
    if ((known && !supported) || (!known && this.strictModels))
      return {
        code: 404,
        status: 'NOT_FOUND',
        message: `models/${route.model} is not found for API version ${route.version}, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`,
      };
    return null;
  }

  private checkBody(req: RecordedRequest, route: Route): GoogleProblem | null {
    if (route.method === 'list' || route.method === 'get') return null;
    if (req.body === null) {
      const snippet = req.raw.slice(0, 40);
      return {
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: `Invalid JSON payload received. Unexpected token.\n${snippet}\n^`,
      };
    }
    const model = route.model!;
    if (route.method === 'countTokens') return checkCountTokensBody(req.body, model);
    if (route.method === 'embedContent') return checkEmbedBody(req.body);
    if (route.method === 'batchEmbedContents') return checkBatchEmbedBody(req.body, model);
    return checkGenerateBody(req.body, model);
  }

  private countTokens(body: any, res: http.ServerResponse): void {
    const inner = field(body, 'generateContentRequest');
    const total = promptTokenCount(inner ?? body);
    const out: Record<string, unknown> = {
      totalTokens: total,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }],
    };
    if (this.cachedTokens > 0) out.cachedContentTokenCount = this.cachedTokens;
    sendJson(res, 200, out, {}, JSON_TYPE);
  }

  private answerFor(body: any, model: string, reply: GeminiReply): { answer: GeminiAnswer; usage: GeminiUsage } {
    const prompt = promptTokenCount(body);
    if (reply.kind === 'answer') {
      const answer = { parts: reply.parts, finishReason: reply.finishReason ?? 'STOP' };
      return { answer, usage: { ...usageMetadata(prompt, reply.parts, 0, this.cachedTokens), ...reply.usage } };
    }
    const answer = defaultGeminiAnswer(body, model);
    const plan = thinkingPlan(body, model);
    const hidden = plan.thinks && !plan.includeThoughts ? countWordsOf(thoughtText(body)) : 0;
    return { answer, usage: usageMetadata(prompt, answer.parts, hidden, this.cachedTokens) };
  }
}

const countWordsOf = (s: string) => (s.match(/\S+/g) ?? []).length;

function textOf(content: any): string {
  return (content?.parts ?? [])
    .map((p: any) => p.text ?? '')
    .join(' ')
    .trim();
}

/** gemini-embedding-001 returns 3072 values, the older text embedding models 768, unless the request asks fewer. */
function dimensionsFor(model: string, request: any): number {
  return field(request, 'outputDimensionality') ?? (model.startsWith('gemini-embedding') ? 3072 : 768);
}

function sendGoogleError(res: http.ServerResponse, p: GoogleProblem, asArray: boolean): void {
  const error = {
    error: { code: p.code, message: p.message, status: p.status, ...(p.details ? { details: p.details } : {}) },
  };
  sendJson(res, p.code, asArray ? [error] : error, {}, JSON_TYPE);
}

/**
 * A streamed answer as Google sends it: thought pieces, then text pieces (a functionCall whole), each chunk a full
 * GenerateContentResponse whose usageMetadata counts everything so far; the finishReason rides on the last chunk.
 */
export function geminiStreamChunks(
  answer: GeminiAnswer,
  usage: GeminiUsage,
  opts: { model: string; responseId: string; pieces: number },
): unknown[] {
  const pieces: GeminiPart[] = [];
  for (const part of answer.parts) {
    if (part.text === undefined) {
      pieces.push(part);
      continue;
    }
    const texts = splitText(part.text, part.thought ? 2 : opts.pieces);
    texts.forEach((text, i) => {
      const piece: GeminiPart = { text };
      if (part.thought) piece.thought = true;
      // the signature rides on the first piece of the part that carries it
      if (i === 0 && part.thoughtSignature) piece.thoughtSignature = part.thoughtSignature;
      pieces.push(piece);
    });
  }
  if (pieces.length === 0) pieces.push({ text: '' });
  const sent: GeminiPart[] = [];
  const thoughtsHidden = (usage.thoughtsTokenCount ?? 0) - partTokens(answer.parts, true);
  return pieces.map((piece, i) => {
    sent.push(piece);
    const last = i === pieces.length - 1;
    const soFar = usageMetadata(usage.promptTokenCount, sent, thoughtsHidden, usage.cachedContentTokenCount ?? 0);
    return {
      candidates: [
        {
          content: { parts: [piece], role: 'model' },
          ...(last ? { finishReason: answer.finishReason } : {}),
          index: 0,
        },
      ],
      usageMetadata: last ? usage : soFar,
      modelVersion: opts.model,
      responseId: opts.responseId,
    };
  });
}

async function writeStream(
  res: http.ServerResponse,
  chunks: unknown[],
  framing: 'sse' | 'json-array',
  script: GeminiStreamScript,
): Promise<void> {
  const sse = framing === 'sse';
  res.writeHead(200, {
    'content-type': sse ? 'text/event-stream' : JSON_TYPE,
    'cache-control': 'no-cache',
  });
  // Google frames SSE events with CRLF pairs and pretty-prints the array form, one element per write
  const frame = (obj: unknown, index: number) =>
    sse ? `data: ${JSON.stringify(obj)}\r\n\r\n` : `${index === 0 ? '[' : '\n,\r\n'}${JSON.stringify(obj, null, 2)}`;
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0 && script.intervalMs) await sleep(script.intervalMs);
    if (res.destroyed) return;
    if (script.breakAfterChunks !== undefined && i >= script.breakAfterChunks) {
      res.socket?.destroy();
      return;
    }
    if (script.hangAfterChunks !== undefined && i >= script.hangAfterChunks) return;
    if (script.errorAfterChunks && i >= script.errorAfterChunks.after) {
      const { code, status, message } = script.errorAfterChunks;
      res.end(frame({ error: { code, message, status } }, i) + (sse ? '' : '\n]'));
      return;
    }
    res.write(frame(chunks[i], i));
  }
  res.end(sse ? '' : '\n]');
}
