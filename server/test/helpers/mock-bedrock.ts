// A fake Bedrock Runtime for Claude on 127.0.0.1:<ephemeral>, for tests that must see the relay talk to Bedrock as
// AWS would judge it: it checks the SigV4 signature the way AWS does (recomputed with AWS's own signer from what
// arrived: method, path, query, the headers the Authorization header lists, the body), refuses what Bedrock
// refuses with Bedrock's status, `x-amzn-errortype` and `{"message"}` body, and answers `/invoke` with a Claude
// message and `/invoke-with-response-stream` with event-stream frames, the last carrying Bedrock's invocation
// metrics. Requests are recorded; `answer` scripts the reply.
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { queryOf } from '../../src/relay/providers/bedrock/sign.js';
import { encodeBedrockChunk, encodeBedrockException } from '../../src/relay/stream/aws-eventstream.js';
import { type ClaudeAnswer, claudeMessage, claudeStreamEvents } from './claude-mock-replies.js';
import { checkThinkingBeforeToolLoop } from './mock-anthropic-rules.js';

export interface BedrockRecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: any;
  /** the model id from the path, decoded */
  modelId: string;
  stream: boolean;
}

/** A scripted reply: a Claude answer, an error before the answer, or an exception in the middle of a stream. */
export type BedrockReply =
  | ClaudeAnswer
  | { kind: 'error'; status: number; type: string; message: string }
  | { kind: 'stream-exception'; type: string; message: string; afterEvents: number };

/** Bedrock Runtime's exceptions, with the status and message InvokeModel answers them with. */
const BEDROCK_EXCEPTIONS = {
  ThrottlingException: { status: 429, message: 'Too many requests, please wait before trying again.' },
  ValidationException: { status: 400, message: 'Malformed input request, please reformat your input and try again.' },
  AccessDeniedException: { status: 403, message: "You don't have access to the model with the specified model ID." },
  ModelTimeoutException: {
    status: 408,
    message: 'Model has timed out in processing the request. Try your request again.',
  },
  ServiceUnavailableException: { status: 503, message: 'Bedrock is unable to process your request.' },
  InternalServerException: { status: 500, message: 'The server encountered an internal error.' },
} as const;

/** A scripted Bedrock exception, answered with its real status, `x-amzn-errortype` and `{"message"}` body. */
export function bedrockError(type: keyof typeof BEDROCK_EXCEPTIONS, message?: string): BedrockReply {
  const known = BEDROCK_EXCEPTIONS[type];
  return { kind: 'error', status: known.status, type, message: message ?? known.message };
}

export interface MockBedrockOptions {
  accessKeyId: string;
  secretAccessKey: string;
  /** the region the mock serves (the credential scope must name it); default us-east-1 */
  region?: string;
  /** the clock, in ms (tests of a stale x-amz-date) */
  now?: () => number;
}

/** AWS's clock skew allowance for x-amz-date. */
const MAX_SKEW_MS = 5 * 60_000;

const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

// Models Bedrock only serves through a cross-region inference profile (no on-demand throughput in one region).
const PROFILE_ONLY = /^anthropic\.claude-(3-7-sonnet|sonnet-4|opus-4|haiku-4-5)/;

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** `20240102T030405Z` → Date, or null. */
function parseAmzDate(value: string): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return null;
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]));
}

function amzDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

export class MockBedrock {
  readonly requests: BedrockRecordedRequest[] = [];
  /** the reply to a valid request (default: a short text answer) */
  answer: (req: BedrockRecordedRequest) => BedrockReply = () => ({ kind: 'text', text: 'Hello from Bedrock!' });
  private readonly now: () => number;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    private readonly options: MockBedrockOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  get region(): string {
    return this.options.region ?? 'us-east-1';
  }

  static async start(options: MockBedrockOptions): Promise<MockBedrock> {
    let mock!: MockBedrock;
    const server = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        mock.handle(req, Buffer.concat(parts), res).catch((err) => {
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ message: String(err) }));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    mock = new MockBedrock(server, `http://127.0.0.1:${port}`, options);
    return mock;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, raw: Buffer, res: http.ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const refuse = (r: Refusal) => {
      const body = JSON.stringify({ message: r.message });
      res.writeHead(r.status, {
        'content-type': 'application/json',
        'x-amzn-requestid': requestId,
        'x-amzn-errortype': `${r.type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    };
    const path = req.url ?? '/';
    const route = /^\/model\/([^/?]+)\/(invoke|invoke-with-response-stream)(\?.*)?$/.exec(path);
    let body: any = null;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      // validated below, after authentication, as AWS does
    }
    const recorded: BedrockRecordedRequest = {
      method: req.method ?? '',
      path,
      headers: req.headers,
      raw,
      body,
      modelId: route ? decodeURIComponent(route[1]) : '',
      stream: route?.[2] === 'invoke-with-response-stream',
    };
    this.requests.push(recorded);
    try {
      await this.verifySignature(req, raw);
      if (!route || req.method !== 'POST') throw new Refusal(404, 'UnknownOperationException', 'Unknown operation');
      validateModel(recorded.modelId);
      validateBody(body);
    } catch (err) {
      if (err instanceof Refusal) return refuse(err);
      throw err;
    }
    const reply = this.answer(recorded);
    if (reply.kind === 'error') return refuse(new Refusal(reply.status, reply.type, reply.message));
    const model = claudeModelName(recorded.modelId);
    if (!recorded.stream) {
      if (reply.kind === 'stream-exception') return refuse(new Refusal(500, reply.type, reply.message));
      const message = claudeMessage(reply, model, 'bdrk');
      const usage = message.usage as { input_tokens: number; output_tokens: number };
      const text = JSON.stringify(message);
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-amzn-requestid': requestId,
        'x-amzn-bedrock-invocation-latency': '321',
        'x-amzn-bedrock-input-token-count': String(usage.input_tokens),
        'x-amzn-bedrock-output-token-count': String(usage.output_tokens),
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-requestid': requestId,
      'x-amzn-bedrock-content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    if (reply.kind === 'stream-exception') {
      const events = claudeStreamEvents({ kind: 'text', text: 'partial answer that will be cut' }, model, 'bdrk');
      for (const ev of events.slice(0, reply.afterEvents)) res.write(encodeBedrockChunk(ev, padding()));
      res.end(encodeBedrockException(reply.type, reply.message));
      return;
    }
    const events = claudeStreamEvents(reply, model, 'bdrk');
    const start = events[0] as { message: { usage: { input_tokens: number } } };
    const delta = events[events.length - 2] as { usage: { output_tokens: number } };
    // Bedrock adds its own accounting to the last event (message_stop)
    events[events.length - 1] = {
      ...events[events.length - 1],
      'amazon-bedrock-invocationMetrics': {
        inputTokenCount: start.message.usage.input_tokens,
        outputTokenCount: delta.usage.output_tokens,
        invocationLatency: 642,
        firstByteLatency: 210,
      },
    };
    for (const ev of events) res.write(encodeBedrockChunk(ev, padding()));
    res.end();
  }

  /** SigV4 as AWS checks it; throws the Refusal AWS would answer with. */
  private async verifySignature(req: http.IncomingMessage, raw: Buffer): Promise<void> {
    const auth = req.headers.authorization;
    if (!auth) throw new Refusal(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
    const m = /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
    if (!m) {
      throw new Refusal(
        403,
        'IncompleteSignatureException',
        `Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization=${auth}`,
      );
    }
    const [, credential, signedList, signature] = m;
    const [accessKeyId, scopeDate, scopeRegion, scopeService, terminator] = credential.split('/');
    if (accessKeyId !== this.options.accessKeyId) {
      throw new Refusal(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    }
    if (terminator !== 'aws4_request' || scopeService !== 'bedrock') {
      throw new Refusal(403, 'InvalidSignatureException', "Credential should be scoped to correct service: 'bedrock'.");
    }
    if (scopeRegion !== this.region) {
      throw new Refusal(403, 'InvalidSignatureException', 'Credential should be scoped to a valid region.');
    }
    const dateHeader = String(req.headers['x-amz-date'] ?? '');
    const signedAt = parseAmzDate(dateHeader);
    if (!signedAt || !dateHeader.startsWith(scopeDate)) {
      throw new Refusal(403, 'InvalidSignatureException', SIGNATURE_MISMATCH);
    }
    const now = this.now();
    if (Math.abs(now - signedAt.getTime()) > MAX_SKEW_MS) {
      throw new Refusal(
        403,
        'InvalidSignatureException',
        signedAt.getTime() < now
          ? `Signature expired: ${dateHeader} is now earlier than ${amzDate(now - MAX_SKEW_MS)} (${amzDate(now)} - 5 min.)`
          : `Signature not yet current: ${dateHeader} is still later than ${amzDate(now + MAX_SKEW_MS)} (${amzDate(now)} + 5 min.)`,
      );
    }
    const signedNames = signedList.split(';');
    if (!signedNames.includes('host')) throw new Refusal(403, 'InvalidSignatureException', SIGNATURE_MISMATCH);
    const bodyHash = createHash('sha256').update(raw).digest('hex');
    const headers: Record<string, string> = {};
    for (const name of signedNames) {
      const value = req.headers[name];
      if (value === undefined) throw new Refusal(403, 'InvalidSignatureException', SIGNATURE_MISMATCH);
      headers[name] = Array.isArray(value) ? value.join(',') : value;
    }
    // The canonical request carries the hash of the bytes that arrived, whatever the x-amz-content-sha256 header
    // claims: a body changed on the way fails here even when its hash header was left alone.
    if (headers['x-amz-content-sha256'] !== undefined && headers['x-amz-content-sha256'] !== bodyHash) {
      throw new Refusal(403, 'InvalidSignatureException', SIGNATURE_MISMATCH);
    }
    const url = new URL(req.url ?? '/', 'http://mock');
    const signer = new SignatureV4({
      credentials: {
        accessKeyId,
        secretAccessKey: this.options.secretAccessKey,
        sessionToken: headers['x-amz-security-token'],
      },
      region: scopeRegion,
      service: scopeService,
      sha256: Sha256,
      applyChecksum: false,
    });
    const expected = await signer.sign(
      {
        method: req.method ?? 'GET',
        protocol: 'http:',
        hostname: headers.host,
        path: url.pathname,
        query: queryOf(url),
        headers,
        body: raw,
      },
      { signingDate: signedAt, signableHeaders: new Set(signedNames) },
    );
    const recomputed = /SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(String(expected.headers.authorization));
    if (!recomputed || recomputed[1] !== signedList || recomputed[2] !== signature) {
      throw new Refusal(403, 'InvalidSignatureException', SIGNATURE_MISMATCH);
    }
  }
}

/** Bedrock pads every stream payload with a random-length `p` so sizes do not reveal the text. */
function padding(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const n = 1 + Math.floor(Math.random() * 30);
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
  return s;
}

/** `us.anthropic.claude-3-5-haiku-20241022-v1:0` → `claude-3-5-haiku-20241022`, the model name Claude answers with. */
function claudeModelName(modelId: string): string {
  return modelId
    .replace(/^[a-z]{2,4}\.(?=anthropic\.)/, '')
    .replace(/^anthropic\./, '')
    .replace(/-v\d+:\d+$/, '');
}

/** Bedrock's check of a model id (also run on the conformance test's upstream paths). */
export function validateModel(modelId: string): void {
  const plain = modelId.replace(/^(us|eu|apac)\.(?=anthropic\.)/, '');
  if (!/^anthropic\.claude-[a-z0-9-]+-v\d+:\d+$/.test(plain)) {
    throw new Refusal(400, 'ValidationException', 'The provided model identifier is invalid.');
  }
  if (plain === modelId && PROFILE_ONLY.test(plain)) {
    throw new Refusal(
      400,
      'ValidationException',
      `Invocation of model ID ${plain} with on-demand throughput isn’t supported. Retry your request with the ID or ARN of an inference profile that contains this model.`,
    );
  }
}

/** What Bedrock's Claude schema check refuses, with its messages (also run on the conformance test's bodies). */
export function validateBody(body: any): void {
  const malformed = (detail: string) =>
    new Refusal(
      400,
      'ValidationException',
      `Malformed input request: ${detail}, please reformat your input and try again.`,
    );
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new Refusal(400, 'ValidationException', 'Malformed input request, please reformat your input and try again.');
  }
  for (const key of ['model', 'stream']) {
    if (key in body) throw malformed(`#: extraneous key [${key}] is not permitted`);
  }
  if (!('anthropic_version' in body)) throw malformed('#: required key [anthropic_version] not found');
  if (body.anthropic_version !== 'bedrock-2023-05-31') {
    throw new Refusal(400, 'ValidationException', 'Invalid API version');
  }
  if (!('max_tokens' in body)) throw malformed('#: required key [max_tokens] not found');
  if (!('messages' in body)) throw malformed('#: required key [messages] not found');
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new Refusal(400, 'ValidationException', 'messages: at least one message is required');
  }
  // then Claude's own checks, reported as a ValidationException with Claude's message
  const thinking = checkThinkingBeforeToolLoop(body);
  if (thinking) throw new Refusal(400, 'ValidationException', thinking.message);
}
