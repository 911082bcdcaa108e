// A fake Vertex AI on 127.0.0.1:<ephemeral>: (a) Google's OAuth token endpoint for the service-account JWT grant,
// verifying the RS256 assertion with the account's public key and issuing opaque tokens with a set lifetime;
// (b) the Gemini publisher endpoints (generateContent, streamGenerateContent?alt=sse); (c) the Anthropic publisher
// endpoints (rawPredict, streamRawPredict). Model endpoints demand a live bearer token and answer 401 in Google's
// error shape otherwise. Requests are recorded; `answer` scripts replies.
import { createPublicKey, generateKeyPairSync, randomBytes, randomUUID, verify, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ClaudeAnswer, claudeMessage, claudeStreamEvents } from './claude-mock-replies.js';
import { checkThinkingBeforeToolLoop } from './mock-anthropic-rules.js';

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';

/** A service-account key file for this mock's token URL, with a fresh RSA key pair, as JSON text. */
export function makeServiceAccount(tokenUrl: string, opts: { project?: string; name?: string } = {}): string {
  const project = opts.project ?? 'mock-project-123';
  const name = opts.name ?? `relay-${randomBytes(3).toString('hex')}`;
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const email = `${name}@${project}.iam.gserviceaccount.com`;
  return JSON.stringify({
    type: 'service_account',
    project_id: project,
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey,
    client_email: email,
    client_id: String(100000000000000000000n + BigInt(randomBytes(6).readUIntBE(0, 6))),
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: tokenUrl,
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`,
    universe_domain: 'googleapis.com',
  });
}

/** What the Anthropic publisher refuses before Claude sees the body (also run on the conformance test's bodies). */
export function vertexClaudeBodyProblem(body: any): string | null {
  if (body?.anthropic_version !== 'vertex-2023-10-16') return `anthropic_version: Input should be 'vertex-2023-10-16'`;
  if ('model' in body) return 'model: Extra inputs are not permitted';
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || !body.messages.length) return 'messages: Field required';
  // Claude's own check, which the publisher answers with
  return checkThinkingBeforeToolLoop(body)?.message ?? null;
}

export interface VertexRecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
  /** for model calls */
  project?: string;
  location?: string;
  publisher?: string;
  model?: string;
  action?: string;
}

export interface GrantRecord {
  iss: string;
  scope: string;
  aud: string;
  kid?: string;
}

/** What a thinking Gemini model adds to an answer: a thought summary part, a signature, the thinking tokens. */
export interface GeminiThinkingSpec {
  /** the thought summary (includeThoughts), sent as a `thought: true` part before the answer */
  thought?: string;
  /** the thoughtSignature the first answer part carries */
  thoughtSignature?: string;
  /** usageMetadata.thoughtsTokenCount */
  thoughtsTokens?: number;
  /** usageMetadata.cachedContentTokenCount (part of promptTokenCount, as Google counts it) */
  cachedTokens?: number;
}

/** A Gemini answer: text, or a function call. */
export type GeminiAnswer = (
  | {
      kind: 'text';
      text: string;
      finishReason?: 'STOP' | 'MAX_TOKENS' | 'SAFETY';
      promptTokens?: number;
      outputTokens?: number;
    }
  | {
      kind: 'function_call';
      name: string;
      args: Record<string, unknown>;
      promptTokens?: number;
      outputTokens?: number;
    }
) &
  GeminiThinkingSpec;

export type VertexReply =
  | { kind: 'claude'; answer: ClaudeAnswer }
  | { kind: 'gemini'; answer: GeminiAnswer }
  | { kind: 'error'; status: number; googleStatus: string; message: string };

/** Google's answer to a missing, unknown or expired access token. */
export const UNAUTHENTICATED_MESSAGE =
  'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';

/** Vertex's 401 as a scripted reply (a token Google no longer accepts, whichever token the relay holds). */
export const VERTEX_UNAUTHENTICATED: VertexReply = {
  kind: 'error',
  status: 401,
  googleStatus: 'UNAUTHENTICATED',
  message: UNAUTHENTICATED_MESSAGE,
};

interface IssuedToken {
  email: string;
  scopes: string[];
  expiresAt: number;
}

export class MockVertex {
  readonly requests: VertexRecordedRequest[] = [];
  readonly grants: GrantRecord[] = [];
  /** how long issued tokens live, in seconds (Google: 3599) */
  tokenLifetimeSec = 3599;
  /** the reply to a valid model call; default: a text answer in the publisher's format */
  answer: (req: VertexRecordedRequest) => VertexReply = (req) =>
    req.publisher === 'anthropic'
      ? { kind: 'claude', answer: { kind: 'text', text: 'Hello from Claude on Vertex!' } }
      : { kind: 'gemini', answer: { kind: 'text', text: 'Hello from Gemini on Vertex!' } };
  /** the mock's clock, in ms */
  now: () => number = Date.now;
  /**
   * Google publisher actions besides chat's (Veo's predictLongRunning and fetchPredictOperation): answered by the
   * test's handler once the bearer token is checked, as Vertex checks it for every action
   */
  readonly actions = new Map<string, (req: VertexRecordedRequest, res: http.ServerResponse) => void>();
  private readonly accounts = new Map<string, KeyObject>();
  private readonly tokens = new Map<string, IssuedToken>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  get tokenUrl(): string {
    return `${this.url}/token`;
  }

  /** tokens issued so far */
  get issuedTokens(): number {
    return this.grants.length;
  }

  static async start(): Promise<MockVertex> {
    let mock!: MockVertex;
    const server = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => mock.handle(req, Buffer.concat(parts).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    mock = new MockVertex(server, `http://127.0.0.1:${port}`);
    return mock;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Makes a service account this mock knows (its public key registered) and returns its key file. */
  newServiceAccount(opts: { project?: string } = {}): string {
    const json = makeServiceAccount(this.tokenUrl, opts);
    this.trust(json);
    return json;
  }

  /** Registers a service account's public key, derived from the key file's private key. */
  trust(serviceAccountJson: string): void {
    const sa = JSON.parse(serviceAccountJson);
    this.accounts.set(sa.client_email, createPublicKey(sa.private_key));
  }

  /** Makes every issued token invalid (as if revoked or expired). */
  revokeAll(): void {
    this.tokens.clear();
  }

  private handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): void {
    const path = req.url ?? '/';
    let body: any = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      // a form body (the token endpoint) or bad JSON (answered below)
    }
    const recorded: VertexRecordedRequest = { method: req.method ?? '', path, headers: req.headers, raw, body };
    this.requests.push(recorded);
    if (path === '/token' && req.method === 'POST') return this.grant(raw, res);
    const route =
      /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)(\?.*)?$/.exec(
        path,
      );
    if (!route)
      return googleError(
        res,
        404,
        'NOT_FOUND',
        `The requested URL ${path.split('?')[0]} was not found on this server.`,
      );
    [, recorded.project, recorded.location, recorded.publisher, recorded.model, recorded.action] = route.map((p) =>
      p === undefined ? p : decodeURIComponent(p),
    );
    const issued = this.liveToken(req.headers.authorization);
    if (!issued) {
      return googleError(res, 401, 'UNAUTHENTICATED', UNAUTHENTICATED_MESSAGE);
    }
    if (!issued.scopes.includes(CLOUD_PLATFORM)) {
      return googleError(res, 403, 'PERMISSION_DENIED', 'Request had insufficient authentication scopes.');
    }
    if (body === null) return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    const query = new URLSearchParams(route[6]?.slice(1) ?? '');
    const own = recorded.publisher === 'google' ? this.actions.get(recorded.action ?? '') : undefined;
    if (own) return own(recorded, res);
    if (recorded.publisher === 'anthropic') return this.anthropic(recorded, res);
    return this.gemini(recorded, query, res);
  }

  private liveToken(header: string | undefined): IssuedToken | null {
    const m = /^Bearer (\S+)$/.exec(header ?? '');
    const issued = m ? this.tokens.get(m[1]) : undefined;
    return issued && issued.expiresAt > this.now() ? issued : null;
  }

  /** The JWT bearer grant, checked as Google's token endpoint checks it. */
  private grant(raw: string, res: http.ServerResponse): void {
    const form = new URLSearchParams(raw);
    const oauthError = (status: number, error: string, description: string) =>
      json(res, status, { error, error_description: description });
    const grantType = form.get('grant_type');
    if (grantType !== JWT_BEARER_GRANT)
      return oauthError(400, 'unsupported_grant_type', `Invalid grant_type: ${grantType ?? ''}`);
    const assertion = form.get('assertion') ?? '';
    const parts = assertion.split('.');
    if (parts.length !== 3) return oauthError(400, 'invalid_request', 'Invalid JWT: malformed assertion.');
    let header: any;
    let claims: any;
    try {
      header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      return oauthError(400, 'invalid_request', 'Invalid JWT: malformed assertion.');
    }
    if (header.alg !== 'RS256') return oauthError(400, 'invalid_grant', 'Invalid JWT Signature.');
    const publicKey = this.accounts.get(String(claims.iss));
    if (!publicKey) return oauthError(400, 'invalid_grant', 'Invalid grant: account not found');
    const signed = verify(
      'RSA-SHA256',
      Buffer.from(`${parts[0]}.${parts[1]}`),
      publicKey,
      Buffer.from(parts[2], 'base64url'),
    );
    if (!signed) return oauthError(400, 'invalid_grant', 'Invalid JWT Signature.');
    const nowSec = Math.floor(this.now() / 1000);
    const timely =
      typeof claims.exp === 'number' &&
      typeof claims.iat === 'number' &&
      claims.exp > nowSec &&
      claims.iat <= nowSec + 300 &&
      claims.exp - claims.iat <= 3600;
    if (!timely) {
      return oauthError(
        400,
        'invalid_grant',
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
      );
    }
    if (claims.aud !== this.tokenUrl) return oauthError(400, 'invalid_grant', 'Invalid JWT audience.');
    if (typeof claims.scope !== 'string' || !claims.scope.trim()) {
      return oauthError(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    }
    this.grants.push({ iss: claims.iss, scope: claims.scope, aud: claims.aud, kid: header.kid });
    const token = `ya29.c.${randomBytes(48).toString('base64url')}`;
    this.tokens.set(token, {
      email: claims.iss,
      scopes: claims.scope.split(' '),
      expiresAt: this.now() + this.tokenLifetimeSec * 1000,
    });
    json(res, 200, { access_token: token, expires_in: this.tokenLifetimeSec, token_type: 'Bearer' });
  }

  private anthropic(req: VertexRecordedRequest, res: http.ServerResponse): void {
    if (req.action !== 'rawPredict' && req.action !== 'streamRawPredict') {
      return googleError(res, 400, 'INVALID_ARGUMENT', `Publisher model action :${req.action} is not supported.`);
    }
    // Vertex hands the body to Anthropic, whose errors keep Anthropic's shape
    const problem = vertexClaudeBodyProblem(req.body);
    if (problem) return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: problem } });
    const reply = this.answer(req);
    if (reply.kind === 'error') return googleError(res, reply.status, reply.googleStatus, reply.message);
    const answer = reply.kind === 'claude' ? reply.answer : ({ kind: 'text', text: 'mismatched reply' } as const);
    if (req.action === 'rawPredict') return json(res, 200, claudeMessage(answer, req.model ?? '', 'vrtx'));
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const events = claudeStreamEvents(answer, req.model ?? '', 'vrtx');
    // Anthropic's stream (which Vertex relays) sends a ping after message_start
    events.splice(1, 0, { type: 'ping' });
    for (const ev of events) res.write(`event: ${String(ev.type)}\ndata: ${JSON.stringify(ev)}\n\n`);
    res.end();
  }

  private gemini(req: VertexRecordedRequest, query: URLSearchParams, res: http.ServerResponse): void {
    if (req.action !== 'generateContent' && req.action !== 'streamGenerateContent') {
      return googleError(res, 400, 'INVALID_ARGUMENT', `Publisher model action :${req.action} is not supported.`);
    }
    if (!Array.isArray(req.body.contents) || !req.body.contents.length) {
      return googleError(
        res,
        400,
        'INVALID_ARGUMENT',
        'Unable to submit request because it has an empty contents field.',
      );
    }
    const reply = this.answer(req);
    if (reply.kind === 'error') return googleError(res, reply.status, reply.googleStatus, reply.message);
    const answer = reply.kind === 'gemini' ? reply.answer : ({ kind: 'text', text: 'mismatched reply' } as const);
    const chunks = geminiChunks(answer, req.model ?? '');
    if (req.action === 'generateContent') return json(res, 200, geminiWhole(answer, req.model ?? ''));
    if (query.get('alt') === 'sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-content-type-options': 'nosniff' });
      for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\r\n\r\n`);
      res.end();
      return;
    }
    // without alt=sse, Gemini streams one JSON array, element by element
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(`[${chunks.map((c) => JSON.stringify(c)).join(',\r\n')}]`);
  }
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Google's API error shape. */
function googleError(res: http.ServerResponse, code: number, status: string, message: string): void {
  json(res, code, { error: { code, message, status } });
}

function geminiUsage(answer: GeminiAnswer, output: number) {
  const prompt = answer.promptTokens ?? 9;
  const thoughts = answer.thoughtsTokens ?? 0;
  const cached = answer.cachedTokens ?? 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: output,
    totalTokenCount: prompt + output + thoughts,
    trafficType: 'ON_DEMAND',
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
    candidatesTokensDetails: [{ modality: 'TEXT', tokenCount: output }],
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
    ...(cached > 0
      ? { cachedContentTokenCount: cached, cacheTokensDetails: [{ modality: 'TEXT', tokenCount: cached }] }
      : {}),
  };
}

/** The answer's parts: the thought summary first, then the text or call (carrying the thought signature). */
function geminiParts(answer: GeminiAnswer): Record<string, unknown>[] {
  const signature = answer.thoughtSignature ? { thoughtSignature: answer.thoughtSignature } : {};
  const main =
    answer.kind === 'text'
      ? { text: answer.text, ...signature }
      : { functionCall: { name: answer.name, args: answer.args }, ...signature };
  return answer.thought ? [{ text: answer.thought, thought: true }, main] : [main];
}

function geminiEnvelope(model: string) {
  return {
    modelVersion: model,
    createTime: new Date().toISOString(),
    responseId: randomUUID().replace(/-/g, '').slice(0, 22),
  };
}

/** A non-streaming generateContent answer, as Vertex returns it. */
function geminiWhole(answer: GeminiAnswer, model: string) {
  return {
    candidates: [
      {
        content: { role: 'model', parts: geminiParts(answer) },
        finishReason: answer.kind === 'text' ? (answer.finishReason ?? 'STOP') : 'STOP',
        avgLogprobs: -0.12,
      },
    ],
    usageMetadata: geminiUsage(answer, answer.outputTokens ?? 5),
    ...geminiEnvelope(model),
  };
}

/** The chunks of streamGenerateContent: the thought summary whole, text in pieces (the signature on the first), a
 * function call whole; the finish reason and usage on the last. */
function geminiChunks(answer: GeminiAnswer, model: string) {
  const envelope = geminiEnvelope(model);
  const output = answer.outputTokens ?? 5;
  const parts: Record<string, unknown>[] = [];
  if (answer.thought) parts.push({ text: answer.thought, thought: true });
  const signature = answer.thoughtSignature ? { thoughtSignature: answer.thoughtSignature } : {};
  if (answer.kind === 'function_call') {
    parts.push({ functionCall: { name: answer.name, args: answer.args }, ...signature });
  } else {
    const pieces: string[] = [];
    for (let i = 0; i < answer.text.length; i += 6) pieces.push(answer.text.slice(i, i + 6));
    if (!pieces.length) pieces.push('');
    pieces.forEach((text, i) => parts.push(i === 0 ? { text, ...signature } : { text }));
  }
  return parts.map((part, i) => {
    const last = i === parts.length - 1;
    const candidate: Record<string, unknown> = { content: { role: 'model', parts: [part] } };
    if (last) candidate.finishReason = answer.kind === 'text' ? (answer.finishReason ?? 'STOP') : 'STOP';
    const chunk: Record<string, unknown> = { candidates: [candidate] };
    if (last) chunk.usageMetadata = geminiUsage(answer, output);
    return { ...chunk, ...envelope };
  });
}
