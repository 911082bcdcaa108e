// MiniMax answers most errors with HTTP 200 and `base_resp: {status_code, status_msg}` (0 is success): such an answer
// is an upstream error, with the HTTP status its code stands for, never an answer to pass on and charge. new-api
// checks base_resp only for images and passes a chat error on as a success.
import { withVendorMessage } from '../openai/compatible.js';
import type { InBandError } from '../types.js';

/** MiniMax's codes (its error code table) → the HTTP status they stand for; any other non-zero code is a 500. */
const STATUS_OF: Record<number, number> = {
  1002: 429, // rate limited
  1039: 429, // token rate limited
  1004: 401, // authentication failed
  2049: 401, // invalid API key
  1008: 403, // insufficient balance
  1026: 400, // input sensitive
  1027: 400, // output sensitive
  2013: 400, // invalid parameters
  1013: 500, // internal service error
};

/** The error in a MiniMax answer's base_resp, null when it says success (or has none). */
export function minimaxAnswerError(body: Buffer): InBandError | null {
  let j: any;
  try {
    j = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const code = Number(j?.base_resp?.status_code ?? 0);
  if (!code) return null;
  const message = String(j.base_resp.status_msg || `MiniMax error ${code}`);
  return { status: STATUS_OF[code] ?? 500, error: { message, type: 'minimax_error', code, param: null } };
}

/** A non-200 answer: OpenAI's shape, else base_resp's message. */
export const parseMinimaxError = withVendorMessage((j) => j?.base_resp?.status_msg);
