// Tencent Hunyuan (channel type 23): Tencent Cloud API 3.0, `POST {base}/` with the action in `X-TC-Action:
// ChatCompletions`, `X-TC-Version: 2023-09-01`, the region and the time, every request signed with TC3-HMAC-SHA256
// over its exact body bytes (sign.ts) from the key `AppId|SecretId|SecretKey`. The signed host is the channel's base
// URL's (new-api signs hunyuan.tencentcloudapi.com whatever the base URL). The body is Hunyuan's PascalCase one, with
// function tools (`Tools`, `ToolCalls`, `ToolCallId`), which new-api does not send; the
// answers, in Tencent's `Response` envelope with its errors inside HTTP 200, are read as OpenAI's (answers.ts).
import type { RelayInfo } from '../types.js';
import { defineProvider } from '../manifest.js';
import { splitBase } from '../openai/index.js';
import { openaiCodec } from '../../formats/openai/index.js';
import { toolConversation, type ToolFunction } from '../text-chat.js';
import { FormatError } from '../../formats/codec.js';
import { hunyuanAnswers, parseHunyuanError } from './answers.js';
import { hunyuanRegion, splitHunyuanKey } from './channel.js';
import { tc3Authorization } from './sign.js';

const VENDOR = '腾讯混元';
export const HUNYUAN_ACTION = 'ChatCompletions';
export const HUNYUAN_VERSION = '2023-09-01';

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

export function hunyuanBody(info: RelayInfo, body: Record<string, any>): Record<string, unknown> {
  const { system, turns, tools } = toolConversation(body, VENDOR);
  const messages = [
    ...(system ? [{ Role: 'system', Content: system }] : []),
    ...turns.map((t) => {
      const m: Record<string, unknown> = { Role: t.role, Content: t.content };
      if (t.calls)
        m.ToolCalls = t.calls.map((c) => ({
          Id: c.id,
          Type: 'function',
          Function: { Name: c.name, Arguments: c.arguments },
        }));
      if (t.role === 'tool') m.ToolCallId = t.callId;
      return m;
    }),
  ];
  const out: Record<string, unknown> = { Model: info.upstreamModel, Messages: messages, Stream: info.isStream };
  Object.assign(out, hunyuanTools(tools, body.tool_choice));
  if (typeof body.temperature === 'number') out.Temperature = clamp(body.temperature, 0, 2);
  if (typeof body.top_p === 'number') out.TopP = clamp(body.top_p, 0, 1);
  if (body.stop !== undefined) out.Stop = Array.isArray(body.stop) ? body.stop : [body.stop];
  return out;
}

/**
 * OpenAI's function tools as Hunyuan's `Tools` (the parameters' JSON Schema as a string), and tool_choice as its
 * `ToolChoice` (none, auto, or custom with `CustomTool` for a named function); `required` has no Hunyuan equivalent.
 */
function hunyuanTools(tools: ToolFunction[], choice: unknown): Record<string, unknown> {
  if (!tools.length) return {};
  const Tools = tools.map((t) => ({
    Type: 'function',
    Function: {
      Name: t.name,
      ...(t.description ? { Description: t.description } : {}),
      Parameters: JSON.stringify(t.parameters ?? { type: 'object', properties: {} }),
    },
  }));
  if (choice === undefined || choice === 'auto') return { Tools };
  if (choice === 'none') return { Tools, ToolChoice: 'none' };
  const named = (choice as { function?: { name?: string } })?.function?.name;
  const custom = named ? Tools.find((t) => t.Function.Name === named) : undefined;
  if (!custom) throw new FormatError(`${VENDOR} 不支持 tool_choice ${JSON.stringify(choice)}`, 400, 'tool_choice');
  return { Tools, ToolChoice: 'custom', CustomTool: custom };
}

function replaceBody(body: Record<string, unknown>, out: Record<string, unknown>): true {
  for (const k of Object.keys(body)) delete body[k];
  Object.assign(body, out);
  return true;
}

export const hunyuanAdaptor = defineProvider({
  id: 'hunyuan',
  types: [23],
  endpoints: {
    chat: {
      target(info) {
        const { origin, prefix } = splitBase(info.channel.baseUrl);
        return { origin, path: `${prefix}/` };
      },
      convertRequest: (info, body) => replaceBody(body, hunyuanBody(info, body)),
      fromHub: (info, hub) =>
        hunyuanBody(info, openaiCodec.requestFromHub(hub, { model: info.upstreamModel, stream: info.isStream })),
    },
  },
  supportsStreamOptions: () => false,
  headers: (info) => ({
    'x-tc-action': HUNYUAN_ACTION,
    'x-tc-version': HUNYUAN_VERSION,
    'x-tc-region': hunyuanRegion(info.channel.other),
  }),
  // TC3: each request signed over its own bytes and time, nothing kept between them
  credential: { kind: 'signed' },
  async authorize(info, req) {
    const key = splitHunyuanKey(info.channel.key);
    if (!key) throw new Error('Hunyuan key must be "AppId|SecretId|SecretKey"');
    const timestamp = Math.floor(Date.now() / 1000);
    req.headers['x-tc-timestamp'] = String(timestamp);
    req.headers.authorization = tc3Authorization({
      path: req.path,
      host: new URL(req.origin).host,
      contentType: req.headers['content-type'] ?? 'application/json',
      action: HUNYUAN_ACTION,
      body: req.body,
      timestamp,
      service: 'hunyuan',
      secretId: key.secretId,
      secretKey: key.secretKey,
    });
  },
  answers: hunyuanAnswers,
  parseError: parseHunyuanError,
});
