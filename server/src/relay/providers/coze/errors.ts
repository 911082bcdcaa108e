// Coze reports most errors with HTTP 200 and a JSON body {code, msg} (0 is success; a stream that starts is SSE): such
// an answer is an upstream error with the status its code stands for, never an answer to charge.
import { withVendorMessage } from '../openai/compatible.js';
import type { InBandError } from '../types.js';

/** Coze's codes → HTTP statuses: authentication, permission, rate limit; any other is a 400. */
function statusOf(code: number): number {
  if (code === 4100 || code === 700012006) return 401;
  if (code === 4101 || code === 4015) return 403;
  if (code === 4013 || code === 4019) return 429;
  return code >= 5000 && code < 6000 ? 500 : 400;
}

export function cozeAnswerError(body: Buffer): InBandError | null {
  let j: any;
  try {
    j = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const code = Number(j?.code ?? 0);
  if (!code) return null;
  const message = String(j.msg || `Coze error ${code}`);
  return { status: statusOf(code), error: { message, type: 'coze_error', code, param: null } };
}

export const parseCozeError = withVendorMessage((j) => j?.msg);
