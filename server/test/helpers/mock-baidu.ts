// A strict mock of Baidu's ERNIE v1 API (Wenxin Workshop) on 127.0.0.1. The token endpoint issues access tokens only
// for the client-credentials grant with the right API Key and Secret Key (as a POST with a query, as Baidu takes it);
// a chat or embeddings call must carry one of its tokens in `?access_token=` and is answered, as Baidu answers, with
// HTTP 200 in every case: an unknown or revoked token is `error_code` 110, an expired one 111, a body Baidu refuses
// 336003 (a system role among the messages, an even count or roles that do not alternate, temperature outside (0, 1]),
// an unknown endpoint 3. Answers are the recorded ones (relay/providers/baidu/__fixtures__/).
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { RecordingServer, sendJson } from './mock-http.js';

const fixture = (file: string) =>
  readFileSync(new URL(`../../src/relay/providers/baidu/__fixtures__/${file}`, import.meta.url), 'utf8');

const CHAT_ENDPOINTS = new Set(['completions', 'completions_pro', 'ernie_speed', 'ernie-speed-128k', 'ernie-lite-8k']);
const EMBEDDING_ENDPOINTS = new Set(['embedding-v1', 'bge_large_zh']);
const API = '/rpc/2.0/ai_custom/v1/wenxinworkshop/';

/** Baidu's refusal of a chat body, or null when it takes it. */
export function baiduChatProblem(body: any): string | null {
  if (!body || typeof body !== 'object') return 'body is not JSON';
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'the messages must not be empty';
  if (messages.length % 2 === 0) return 'the length of messages must be an odd number';
  const names = new Set((body.functions ?? []).map((f: any) => f?.name));
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    // a function's result stands where a user turn would, right after the assistant's call of that function
    const called = messages[i - 1]?.function_call?.name;
    const want = i % 2 === 1 ? 'assistant' : called ? 'function' : 'user';
    if (m?.role !== want)
      return `the role of message with ${i % 2 ? 'odd' : 'even'} index in the messages must be ${want}`;
    if (m.role === 'function' && m.name !== called) return 'the name of a function message must be the called one';
    if (m.function_call !== undefined) {
      if (!names.has(m.function_call?.name) || typeof m.function_call.arguments !== 'string')
        return 'function_call must name one of functions, with arguments as a string';
      if (typeof m.content !== 'string') return 'message content must be a string';
      continue;
    }
    if (typeof m.content !== 'string' || !m.content) return 'message content must be a non-empty string';
  }
  if (body.functions !== undefined) {
    if (!Array.isArray(body.functions) || !body.functions.length) return 'functions must be a non-empty list';
    for (const f of body.functions)
      if (typeof f?.name !== 'string' || typeof f.description !== 'string' || typeof f.parameters !== 'object')
        return 'each function needs a name, a description and parameters';
  }
  if (body.system !== undefined && typeof body.system !== 'string') return 'system must be a string';
  if (body.temperature !== undefined && !(body.temperature > 0 && body.temperature <= 1))
    return 'temperature range is (0, 1.0]';
  if (body.top_p !== undefined && !(body.top_p >= 0 && body.top_p <= 1)) return 'top_p range is [0, 1.0]';
  if ('model' in body || 'tools' in body) return `unknown parameter ${'model' in body ? 'model' : 'tools'}`;
  return null;
}

/** A Baidu body read back as OpenAI's (the conformance harness compares the conversation it carries). */
export function baiduBodyAsOpenAI(body: any): Record<string, unknown> {
  const ids = new Map<string, string>();
  const turns = body.messages.map((m: any, i: number) => {
    if (m.role === 'function') return { role: 'tool', tool_call_id: ids.get(m.name), content: m.content };
    if (!m.function_call) return { role: m.role, content: m.content };
    ids.set(m.function_call.name, `call_${i}`);
    return {
      role: 'assistant',
      content: m.content,
      tool_calls: [{ id: `call_${i}`, type: 'function', function: m.function_call }],
    };
  });
  const messages = [...(body.system ? [{ role: 'system', content: body.system }] : []), ...turns];
  const tools = body.functions?.map((f: any) => ({ type: 'function', function: f }));
  return { messages, tools, temperature: body.temperature, top_p: body.top_p, stop: body.stop };
}

export class MockBaidu {
  /** token exchanges asked (successful or not) */
  exchanges = 0;
  /** the valid tokens, with whether each has expired */
  private readonly tokens = new Map<string, { expired: boolean }>();
  /** the lifetime the token endpoint announces, in seconds */
  expiresIn = 2_592_000;

  private constructor(
    readonly server: RecordingServer,
    readonly apiKey: string,
    readonly secretKey: string,
  ) {}

  get url(): string {
    return this.server.url;
  }

  /** the calls to the model endpoints (not the token endpoint) */
  get calls() {
    return this.server.requests.filter((r) => r.path.startsWith(API));
  }

  /** Every token issued so far expires (Baidu answers 111 to it). */
  expireTokens(): void {
    for (const t of this.tokens.values()) t.expired = true;
  }

  static async start(apiKey: string, secretKey: string): Promise<MockBaidu> {
    let mock: MockBaidu | null = null;
    const server = await RecordingServer.start(async (req, res) => {
      const u = new URL(req.path, 'http://mock');
      const baiduError = (code: number, msg: string) => sendJson(res, 200, { error_code: code, error_msg: msg });
      if (req.method !== 'POST') return sendJson(res, 404, { error_code: 3, error_msg: 'Unsupported openapi method' });
      if (u.pathname === '/oauth/2.0/token') {
        mock!.exchanges++;
        const q = u.searchParams;
        if (q.get('grant_type') !== 'client_credentials')
          return sendJson(res, 400, { error: 'unsupported_grant_type', error_description: 'unsupported grant type' });
        if (q.get('client_id') !== apiKey)
          return sendJson(res, 401, { error: 'invalid_client', error_description: 'unknown client id' });
        if (q.get('client_secret') !== secretKey)
          return sendJson(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' });
        const token = `24.${randomBytes(16).toString('hex')}.${mock!.expiresIn}.1733300000.282335-${randomBytes(4).toString('hex')}`;
        mock!.tokens.set(token, { expired: false });
        return sendJson(res, 200, {
          refresh_token: `25.${randomBytes(16).toString('hex')}`,
          expires_in: mock!.expiresIn,
          session_key: randomBytes(12).toString('hex'),
          access_token: token,
          scope: 'public brain_all_scope wenxinworkshop_mgr',
          session_secret: randomBytes(12).toString('hex'),
        });
      }
      if (!u.pathname.startsWith(API)) return baiduError(3, 'Unsupported openapi method');
      const token = mock!.tokens.get(u.searchParams.get('access_token') ?? '');
      if (!token) return baiduError(110, 'Access token invalid or no longer valid');
      if (token.expired) return baiduError(111, 'Access token expired');
      const [kind, endpoint] = u.pathname.slice(API.length).split('/');
      if (kind === 'embeddings' && EMBEDDING_ENDPOINTS.has(endpoint)) {
        const input: string[] = req.body?.input;
        if (!Array.isArray(input) || !input.every((s) => typeof s === 'string'))
          return baiduError(336003, 'input must be a list of strings');
        const prompt = input.reduce((n, s) => n + s.length, 0);
        return sendJson(res, 200, {
          id: 'as-emb7k2q9xz',
          object: 'embedding_list',
          created: 1733305999,
          data: input.map((_, index) => ({ object: 'embedding', embedding: [0.011, -0.023, 0.042], index })),
          usage: { prompt_tokens: prompt, total_tokens: prompt },
        });
      }
      if (kind !== 'chat' || !CHAT_ENDPOINTS.has(endpoint)) return baiduError(3, 'Unsupported openapi method');
      const problem = baiduChatProblem(req.body);
      if (problem) return baiduError(336003, problem);
      // functions and no result yet: the recorded function call
      const dir = req.body.functions && req.body.messages.at(-1)?.role !== 'function' ? 'tools/' : '';
      if (req.body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream;charset=utf-8' });
        return void res.end(fixture(`${dir}stream.sse`));
      }
      res.writeHead(200, { 'content-type': 'application/json;charset=utf-8' });
      res.end(fixture(`${dir}answer.json`));
    });
    mock = new MockBaidu(server, apiKey, secretKey);
    return mock;
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
