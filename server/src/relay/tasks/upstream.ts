// One HTTP call of the task engine to a platform's upstream (a submit, a batch fetch, an image-seed): through the
// channel's proxy when it has one (channel-setting.ts, the relay's own proxy transports), a time limit, a size limit,
// the body always read to its end or cancelled (an unread body keeps its connection from the pool), the answer parsed
// as JSON when it is JSON.
import type { TaskRequest } from '../providers/index.js';
import { proxyTransport } from '../channel-setting.js';

/** a submit or a fetch that takes longer is given up (new-api's default relay timeout is none at all) */
export const TASK_CALL_TIMEOUT_MS = 30_000;
/** an answer larger than this is not read (a fetch of 50 finished songs is a few hundred KB) */
const MAX_ANSWER_BYTES = 8 << 20;

export interface TaskAnswer {
  status: number;
  /** the parsed JSON answer, undefined when it was not JSON */
  body: unknown;
  /** the answer's text as received */
  text: string;
}

/** Reads an answer's chunks up to the size limit; the source is released whatever happens. */
async function readLimited(
  chunks: AsyncIterable<Uint8Array>,
  release: () => Promise<unknown>,
  maxBytes: number,
): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const value of chunks) {
      size += value.byteLength;
      if (size > maxBytes) throw new Error('task upstream answer too large');
      parts.push(Buffer.from(value));
    }
  } finally {
    // releases the connection whatever happened above (a no-op once the body has ended)
    await release().catch(() => undefined);
  }
  return Buffer.concat(parts).toString('utf8');
}

function answerOf(status: number, text: string): TaskAnswer {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status, body, text };
}

/**
 * `proxy`: the channel's proxy URL (channel-setting.ts proxyOf), null for a direct call; `maxBytes`: a larger limit
 * for an answer that carries a video inline (Vertex Veo's operation).
 */
export async function callTaskUpstream(
  req: TaskRequest,
  timeoutMs = TASK_CALL_TIMEOUT_MS,
  proxy: string | null = null,
  maxBytes = MAX_ANSWER_BYTES,
): Promise<TaskAnswer> {
  if (proxy) {
    const dispatcher = await proxyTransport(proxy).ready();
    const u = new URL(req.url);
    const res = await dispatcher.request({
      origin: u.origin,
      path: `${u.pathname}${u.search}`,
      method: req.method,
      headers: req.headers,
      body: req.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await readLimited(res.body, async () => res.body.destroy(), maxBytes);
    return answerOf(res.statusCode, text);
  }
  const res = await fetch(req.url, {
    method: req.method,
    headers: req.headers,
    body: req.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.body) return answerOf(res.status, '');
  const reader = res.body.getReader();
  const chunks = (async function* () {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  })();
  return answerOf(res.status, await readLimited(chunks, () => reader.cancel(), maxBytes));
}
