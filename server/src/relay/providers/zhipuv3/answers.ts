// Zhipu v3's answers read as OpenAI's (providers/dialect.ts). A whole answer is `{code, msg, success, data}` with the
// text in `data.choices[].content` (quoted: Zhipu wraps it in `"`) and the usage in `data.usage`; an error is the same
// envelope with `success: false`, inside HTTP 200. A stream's events are named: `add` carries a piece of text as its
// raw `data:`, `finish` the usage in its `meta:` line (JSON), `error` and `interrupted` end it early.
import { openaiAnswer, openaiChunk, VendorRefusal, type VendorAnswerReader } from '../dialect.js';
import type { ProviderError } from '../types.js';
import { openaiCodec } from '../../formats/openai/index.js';

/** Zhipu's codes for a token it refuses (expired, bad signature): a new one is signed and the request resent once. */
const TOKEN_CODES = new Set([1000, 1001, 1002, 1003, 1004]);
const LIMIT_CODES = new Set([1113, 1301, 1302, 1303, 1304, 1305]);

function statusOf(code: number): number {
  if (TOKEN_CODES.has(code)) return 401;
  if (LIMIT_CODES.has(code)) return 429;
  if (code >= 1200 && code < 1300) return 400;
  return 500;
}

function refusal(json: any): VendorRefusal {
  const code = Number(json.code);
  const message = typeof json.msg === 'string' && json.msg ? json.msg : `code ${code}`;
  return new VendorRefusal(statusOf(code), message, code, TOKEN_CODES.has(code));
}

/** Zhipu quotes the text of a whole answer: `"\"巴黎。\""`. */
const unquote = (text: string) =>
  text.length >= 2 && text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;

export const zhipuV3Answers: VendorAnswerReader = {
  answer(info, json) {
    if (!json || typeof json !== 'object' || json.success !== true || json.code !== 200) throw refusal(json ?? {});
    const data = json.data ?? {};
    const choices: { content?: string }[] = Array.isArray(data.choices) ? data.choices : [];
    const u = data.usage;
    return openaiAnswer(info, {
      id: String(data.task_id ?? data.request_id ?? ''),
      text: choices.map((c) => unquote(String(c.content ?? ''))).join(''),
      finish: 'stop',
      usage: u
        ? { prompt_tokens: Number(u.prompt_tokens) || 0, completion_tokens: Number(u.completion_tokens) || 0 }
        : null,
    });
  },
  stream(info) {
    return (event) => {
      const id = event.id ?? '';
      switch (event.event) {
        case 'add':
          return event.data ? [openaiChunk(info, { id, text: event.data })] : [];
        case 'finish': {
          let meta: any = null;
          try {
            meta = event.meta ? JSON.parse(event.meta) : null;
          } catch {
            meta = null;
          }
          const u = meta?.usage;
          const usage = u
            ? { prompt_tokens: Number(u.prompt_tokens) || 0, completion_tokens: Number(u.completion_tokens) || 0 }
            : null;
          const out = event.data ? [openaiChunk(info, { id, text: event.data })] : [];
          return [...out, openaiChunk(info, { id, finish: 'stop', usage })];
        }
        case 'interrupted':
          return [openaiChunk(info, { id, finish: 'content_filter' })];
        case 'error':
          throw new VendorRefusal(500, event.data || 'Zhipu stream error', 'stream_error');
        default:
          return [];
      }
    };
  },
};

/** A non-200 answer: Zhipu's `{code, msg}` envelope when it is one (its 401 for a refused token), else OpenAI's. */
export function parseZhipuV3Error(status: number, body: Buffer): ProviderError {
  let json: any = null;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    // not JSON: OpenAI's reader keeps the text
  }
  if (json && typeof json === 'object' && json.code !== undefined && typeof json.msg === 'string')
    return { message: json.msg || `code ${json.code}`, type: 'upstream_error', code: json.code, param: null };
  return openaiCodec.parseError(status, body);
}
