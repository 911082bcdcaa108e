// The error an OpenAI-compatible upstream answers (and the Responses API, and every vendor that copies OpenAI's
// shape), read into the relay's fields as new-api reads it (new-api-compat.md §4.6 step 9).
import type { UpstreamError } from '../codec.js';

export function parseOpenAIStyleError(status: number, body: Buffer): UpstreamError {
  const fallback: UpstreamError = {
    message: '',
    type: 'upstream_error',
    code: 'bad_response_status_code',
    param: String(status),
  };
  let j: any;
  try {
    j = JSON.parse(body.toString('utf8'));
  } catch {
    // as new-api: a body that is not JSON (a proxy's HTML page, a plain-text stack) is not shown to the client
    fallback.message = `bad response status code ${status}`;
    return fallback;
  }
  const e = j?.error;
  if (e && typeof e === 'object' && (e.type || e.message)) {
    // an OpenAI-shaped error object replaces the whole error (new-api-compat.md §4.6 step 9)
    return {
      message: String(e.message ?? ''),
      type: String(e.type || 'upstream_error'),
      code: e.code ?? null,
      param: e.param == null ? null : String(e.param),
    };
  }
  const msg =
    (typeof e === 'string' && e) ||
    j?.message ||
    j?.msg ||
    j?.err ||
    j?.error_msg ||
    j?.header?.message ||
    j?.response?.error?.message ||
    '';
  fallback.message = msg ? String(msg) : `bad response status code ${status}`;
  return fallback;
}
