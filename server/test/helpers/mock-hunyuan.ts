// A strict mock of Tencent Hunyuan (Tencent Cloud API 3.0) on 127.0.0.1. It recomputes each request's TC3-HMAC-SHA256
// signature over the exact body bytes it received, with its own code (not the gateway's), and refuses as Tencent
// does, inside HTTP 200 with `Response.Error`: a missing or lower-case `X-TC-Action: ChatCompletions`, another
// `X-TC-Version` than 2023-09-01, a timestamp more than 300 s away, a scope that is not `<date>/hunyuan/tc3_request`,
// signed headers other than `content-type;host;x-tc-action`, an unknown SecretId, a wrong signature. The body is
// Hunyuan's (`Model`, `Messages` with a system message only first, then user and assistant alternating, ending with
// the user, tool calls answered by tool messages; `Tools` with their parameters as a JSON string). Answers are the
// recorded ones (relay/providers/hunyuan/__fixtures__/, tools/ for a request with tools and no result yet).
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { RecordingServer, sendJson } from './mock-http.js';

const fixture = (file: string) =>
  readFileSync(new URL(`../../src/relay/providers/hunyuan/__fixtures__/${file}`, import.meta.url), 'utf8');

const MODELS = new Set(['hunyuan-lite', 'hunyuan-standard', 'hunyuan-pro', 'hunyuan-turbo']);

const FIELDS = ['Model', 'Messages', 'Stream', 'Temperature', 'TopP', 'Stop', 'Tools', 'ToolChoice', 'CustomTool'];

/** Hunyuan's refusal of a `Tools` list: functions with a name and their parameters as a JSON Schema string. */
function toolsProblem(tools: unknown): string | null {
  if (!Array.isArray(tools) || !tools.length) return 'Tools 不能为空';
  for (const t of tools) {
    if (t?.Type !== 'function' || typeof t.Function?.Name !== 'string' || !t.Function.Name)
      return 'Tools 中 Type 须为 function 且 Function.Name 不能为空';
    try {
      if (typeof JSON.parse(t.Function.Parameters) !== 'object') return 'Function.Parameters 须为 JSON Schema 字符串';
    } catch {
      return 'Function.Parameters 须为 JSON Schema 字符串';
    }
  }
  return null;
}

/**
 * Hunyuan's refusal of a body, or null when it takes it: after the system message, user and assistant alternate and
 * the user ends, except that an assistant turn with ToolCalls is followed by one tool message (ToolCallId of one of
 * its calls) per call, after which the assistant speaks again or the conversation ends.
 */
export function hunyuanBodyProblem(body: any): string | null {
  if (!body || typeof body !== 'object') return 'body is not JSON';
  for (const k of Object.keys(body)) if (!FIELDS.includes(k)) return `The parameter \`${k}\` is not recognized`;
  if (typeof body.Model !== 'string') return 'Model is required';
  if (body.Tools !== undefined) {
    const problem = toolsProblem(body.Tools);
    if (problem) return problem;
  }
  if (body.ToolChoice !== undefined && !['none', 'auto', 'custom'].includes(body.ToolChoice))
    return 'ToolChoice 取值为 none、auto 或 custom';
  if (body.ToolChoice === 'custom' && !body.CustomTool?.Function?.Name) return 'ToolChoice 为 custom 时须传 CustomTool';
  const msgs = body.Messages;
  if (!Array.isArray(msgs) || msgs.length === 0) return 'Messages is required';
  const rest = msgs[0]?.Role === 'system' ? msgs.slice(1) : msgs;
  let want = 'user';
  let open: Set<string> | null = null;
  for (let i = 0; i < rest.length; i++) {
    const m = rest[i];
    if (open) {
      if (m?.Role !== 'tool' || !open.has(m.ToolCallId))
        return `Messages 第 ${i} 条应为 tool，且 ToolCallId 须对应调用`;
      open.delete(m.ToolCallId);
      if (typeof m.Content !== 'string') return 'Content 不能为空';
      if (!open.size) {
        open = null;
        want = 'assistant';
      }
      continue;
    }
    if (m?.Role !== want) return `Messages 中 user 与 assistant 必须交替出现（第 ${i} 条应为 ${want}）`;
    if (Array.isArray(m.ToolCalls) && m.ToolCalls.length) {
      if (!body.Tools) return 'ToolCalls 需要 Tools';
      open = new Set(m.ToolCalls.map((c: any) => c?.Id));
      continue;
    }
    if (typeof m.Content !== 'string' || !m.Content) return 'Content 不能为空';
    want = want === 'user' ? 'assistant' : 'user';
  }
  if (open) return '工具调用缺少 tool 消息';
  if (want !== 'assistant') return 'Messages 中 user 与 assistant 必须交替出现，且最后一条必须是 user';
  if (body.Temperature !== undefined && !(body.Temperature >= 0 && body.Temperature <= 2))
    return 'Temperature 取值范围 [0, 2]';
  if (body.TopP !== undefined && !(body.TopP >= 0 && body.TopP <= 1)) return 'TopP 取值范围 [0, 1]';
  return null;
}

/** A Hunyuan body read back as OpenAI's. */
export function hunyuanBodyAsOpenAI(body: any): Record<string, unknown> {
  const messages = body.Messages.map((m: any) => ({
    role: m.Role,
    content: m.Content,
    ...(m.ToolCalls?.length
      ? {
          tool_calls: m.ToolCalls.map((c: any) => ({
            id: c.Id,
            type: 'function',
            function: { name: c.Function.Name, arguments: c.Function.Arguments },
          })),
        }
      : {}),
    ...(m.Role === 'tool' ? { tool_call_id: m.ToolCallId } : {}),
  }));
  const tools = body.Tools?.map((t: any) => ({
    type: 'function',
    function: {
      name: t.Function.Name,
      description: t.Function.Description,
      parameters: JSON.parse(t.Function.Parameters),
    },
  }));
  return { messages, tools, temperature: body.Temperature, top_p: body.TopP, stop: body.Stop };
}

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

export class MockHunyuan {
  /** signatures checked and accepted */
  accepted = 0;

  private constructor(readonly server: RecordingServer) {}

  get url(): string {
    return this.server.url;
  }

  static async start(secretId: string, secretKey: string): Promise<MockHunyuan> {
    let mock: MockHunyuan | null = null;
    const server = await RecordingServer.start(async (req, res) => {
      const refuse = (Code: string, Message: string) =>
        sendJson(res, 200, { Response: { Error: { Code, Message }, RequestId: 'mock-refusal' } });
      const h = req.headers;
      if (req.method !== 'POST' || req.path !== '/') return refuse('InvalidAction', 'only POST / is served');
      if (h['x-tc-action'] !== 'ChatCompletions')
        return refuse('InvalidAction', `The action \`${String(h['x-tc-action'])}\` is not valid`);
      if (h['x-tc-version'] !== '2023-09-01') return refuse('NoSuchVersion', 'The requested version is not supported');
      if (typeof h['x-tc-region'] !== 'string' || !h['x-tc-region'])
        return refuse('InvalidParameter', 'Region missing');
      const timestamp = Number(h['x-tc-timestamp']);
      if (!Number.isInteger(timestamp) || Math.abs(timestamp - Date.now() / 1000) > 300)
        return refuse('AuthFailure.SignatureExpire', 'The signature expired (timestamp more than 300 s away)');
      const m =
        /^TC3-HMAC-SHA256 Credential=([^/]+)\/(\d{4}-\d{2}-\d{2})\/hunyuan\/tc3_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
          String(h.authorization ?? ''),
        );
      if (!m) return refuse('AuthFailure.InvalidAuthorization', 'Authorization is not a TC3-HMAC-SHA256 signature');
      const [, id, date, signedHeaders, signature] = m;
      if (id !== secretId) return refuse('AuthFailure.SecretIdNotFound', 'The SecretId is not found');
      if (date !== new Date(timestamp * 1000).toISOString().slice(0, 10))
        return refuse('AuthFailure.SignatureFailure', 'The credential scope date is not the timestamp’s');
      if (signedHeaders !== 'content-type;host;x-tc-action')
        return refuse(
          'AuthFailure.SignatureFailure',
          `SignedHeaders ${signedHeaders} must be content-type;host;x-tc-action`,
        );
      const canonical = [
        'POST',
        '/',
        '',
        `content-type:${String(h['content-type']).toLowerCase()}\nhost:${String(h.host).toLowerCase()}\nx-tc-action:chatcompletions\n`,
        signedHeaders,
        sha256Hex(Buffer.from(req.raw, 'utf8')),
      ].join('\n');
      const toSign = ['TC3-HMAC-SHA256', String(timestamp), `${date}/hunyuan/tc3_request`, sha256Hex(canonical)].join(
        '\n',
      );
      const key = hmac(hmac(hmac(`TC3${secretKey}`, date), 'hunyuan'), 'tc3_request');
      if (createHmac('sha256', key).update(toSign).digest('hex') !== signature)
        return refuse(
          'AuthFailure.SignatureFailure',
          'The provided credentials could not be validated. Please check your signature is correct.',
        );
      mock!.accepted++;
      const problem = hunyuanBodyProblem(req.body);
      if (problem) return refuse('InvalidParameter', problem);
      if (!MODELS.has(req.body.Model)) return refuse('InvalidParameterValue.Model', `模型 ${req.body.Model} 不存在`);
      // tools and no result yet: the recorded tool call
      const dir = req.body.Tools && req.body.Messages.at(-1)?.Role !== 'tool' ? 'tools/' : '';
      if (req.body.Stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end(fixture(`${dir}stream.sse`));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(fixture(`${dir}answer.json`));
    });
    mock = new MockHunyuan(server);
    return mock;
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
