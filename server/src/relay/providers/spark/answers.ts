// Spark's frames read as OpenAI's chunks (providers/dialect.ts; transport/ws-exchange.ts makes each frame an event).
// A frame is `{header: {code, message, sid, status}, payload: {choices: {status, text: [{content}]}, usage}}`:
// status 2 is the last, with `payload.usage.text`; a `header.code` other than 0 is an error (then Spark closes).
import { openaiChunk, VendorRefusal, type VendorAnswerReader } from '../dialect.js';
import type { ProviderError } from '../types.js';
import { openaiCodec } from '../../formats/openai/index.js';

/** Spark's codes: 11200 the app may not use the model, 10013/10014/10019 content refused, 11201-11203 quotas. */
function statusOf(code: number): number {
  if (code === 11200) return 403;
  if (code >= 11201 && code <= 11203) return 429;
  if (code === 10013 || code === 10014 || code === 10019 || code === 10907) return 400;
  return 500;
}

export const sparkAnswers: VendorAnswerReader = {
  answer() {
    // Spark only streams: a whole answer is its stream joined (dialect.ts)
    throw new Error('Spark answered with a single JSON document, not frames');
  },
  stream(info) {
    return (event) => {
      if (!event.data) return [];
      const frame = JSON.parse(event.data);
      const header = frame.header ?? {};
      if (header.code !== undefined && header.code !== 0)
        throw new VendorRefusal(statusOf(Number(header.code)), String(header.message ?? header.code), header.code);
      const id = String(header.sid ?? '');
      const text = (frame.payload?.choices?.text ?? []).map((t: { content?: string }) => t.content ?? '').join('');
      const out = text ? [openaiChunk(info, { id, text })] : [];
      if (header.status === 2) {
        const u = frame.payload?.usage?.text;
        const usage = u
          ? { prompt_tokens: Number(u.prompt_tokens) || 0, completion_tokens: Number(u.completion_tokens) || 0 }
          : null;
        out.push(openaiChunk(info, { id, finish: 'stop', usage }));
      }
      return out;
    };
  },
};

/** A refused handshake: iFlytek's `{"message": …}` (a bad signature, a stale date). */
export function parseSparkError(status: number, body: Buffer): ProviderError {
  let json: any = null;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    // not JSON
  }
  if (json && typeof json.message === 'string' && !json.error)
    return { message: json.message, type: 'upstream_error', code: status, param: null };
  if (json?.header?.code)
    return { message: String(json.header.message), type: 'upstream_error', code: json.header.code, param: null };
  return openaiCodec.parseError(status, body);
}
