// A strict mock of Zhipu's v3 API (ChatGLM) on 127.0.0.1. Every call must carry in `Authorization` (no Bearer) a JWT
// the mock verifies with the key's secret: HS256, header `sign_type: SIGN`, claims `api_key` (the key's id), `exp`
// and `timestamp` in milliseconds, the timestamp within 5 minutes of now and the token not expired; otherwise HTTP 401
// with Zhipu's `{code, msg, success: false}`. The body is Zhipu's: `prompt` turns alternating user and assistant
// (odd in number), temperature and top_p in (0, 1). `/invoke` answers the recorded envelope, `/sse-invoke` the recorded
// named-event stream (relay/providers/zhipuv3/__fixtures__/); Zhipu's refusals come inside HTTP 200.
import { readFileSync } from 'node:fs';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { RecordingServer, sendJson } from './mock-http.js';

const fixture = (file: string) =>
  readFileSync(new URL(`../../src/relay/providers/zhipuv3/__fixtures__/${file}`, import.meta.url), 'utf8');

const MODELS = new Set(['chatglm_turbo', 'chatglm_pro', 'chatglm_std', 'chatglm_lite']);
const SKEW_MS = 5 * 60_000;

/** Zhipu's refusal of a v3 body, or null when it takes it. */
export function zhipuV3BodyProblem(body: any): string | null {
  if (!body || typeof body !== 'object') return 'body is not JSON';
  if ('messages' in body || 'model' in body) return `unknown parameter ${'messages' in body ? 'messages' : 'model'}`;
  const prompt = body.prompt;
  if (!Array.isArray(prompt) || prompt.length === 0) return 'prompt 不能为空';
  if (prompt.length % 2 === 0) return 'prompt 的条数必须为奇数';
  for (let i = 0; i < prompt.length; i++) {
    const want = i % 2 === 0 ? 'user' : 'assistant';
    if (prompt[i]?.role !== want) return `prompt[${i}].role 必须是 ${want}`;
    if (typeof prompt[i].content !== 'string' || !prompt[i].content) return `prompt[${i}].content 不能为空`;
  }
  for (const p of ['temperature', 'top_p'])
    if (body[p] !== undefined && !(body[p] > 0 && body[p] < 1)) return `${p} 取值范围为 (0, 1)`;
  return null;
}

/** A v3 body read back as OpenAI's (the system prompt is the first user turn the assistant acknowledged). */
export function zhipuV3BodyAsOpenAI(body: any, ack: string): Record<string, unknown> {
  const prompt = [...body.prompt];
  const messages =
    prompt.length >= 3 && prompt[1].content === ack
      ? [{ role: 'system', content: prompt[0].content }, ...prompt.slice(2)]
      : prompt;
  return { messages, temperature: body.temperature, top_p: body.top_p };
}

export class MockZhipuV3 {
  private constructor(readonly server: RecordingServer) {}

  get url(): string {
    return this.server.url;
  }

  /** the JWTs the mock accepted, in order */
  readonly tokens: string[] = [];

  static async start(apiKey: string): Promise<MockZhipuV3> {
    const [id, secret] = [apiKey.slice(0, apiKey.indexOf('.')), apiKey.slice(apiKey.indexOf('.') + 1)];
    let mock: MockZhipuV3 | null = null;
    const server = await RecordingServer.start(async (req, res) => {
      const refuse = (code: number, msg: string) => sendJson(res, 401, { code, msg, success: false });
      const jwt = req.headers.authorization;
      if (!jwt) return refuse(1001, 'Header中未收到Authorization参数，无法进行身份验证。');
      if (/^Bearer /i.test(jwt)) return refuse(1002, 'Authorization Token非法，请确认Authorization Token正确传递。');
      let payload: any;
      try {
        const header = decodeProtectedHeader(jwt);
        if (header.alg !== 'HS256' || header.sign_type !== 'SIGN') return refuse(1002, 'Authorization Token非法');
        const verified = await compactVerify(jwt, new TextEncoder().encode(secret));
        payload = JSON.parse(new TextDecoder().decode(verified.payload));
      } catch {
        return refuse(1002, 'Authorization Token非法，请确认Authorization Token正确传递。');
      }
      const now = Date.now();
      if (payload.api_key !== id) return refuse(1003, 'Authorization Token 的 api_key 不存在');
      // milliseconds: a timestamp in seconds would lie in 1970
      if (typeof payload.timestamp !== 'number' || Math.abs(payload.timestamp - now) > SKEW_MS)
        return refuse(1004, 'Authorization Token 的 timestamp 无效');
      if (typeof payload.exp !== 'number' || payload.exp <= now) return refuse(1004, 'Authorization Token已过期');
      mock!.tokens.push(jwt);
      const m = /^\/api\/paas\/v3\/model-api\/([^/]+)\/(invoke|sse-invoke)$/.exec(req.path);
      if (req.method !== 'POST' || !m) return sendJson(res, 404, { code: 404, msg: 'Not Found', success: false });
      if (!MODELS.has(m[1]))
        return sendJson(res, 200, { code: 1211, msg: '模型不存在，请检查模型代码。', success: false });
      const problem = zhipuV3BodyProblem(req.body);
      if (problem) return sendJson(res, 200, { code: 1214, msg: problem, success: false });
      if (req.body.prompt.some((p: { content: string }) => p.content.includes('TOO_LONG')))
        return sendJson(res, 200, JSON.parse(fixture('error.json')));
      if (m[2] === 'sse-invoke') {
        res.writeHead(200, { 'content-type': 'text/event-stream;charset=UTF-8' });
        return void res.end(fixture('stream.sse'));
      }
      res.writeHead(200, { 'content-type': 'application/json;charset=UTF-8' });
      res.end(fixture('answer.json'));
    });
    mock = new MockZhipuV3(server);
    return mock;
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
