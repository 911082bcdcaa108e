// The WorkerUrl option (root's request relay for webhooks and remote images, lib/safe-fetch.ts): checked when saved
// like a user's webhook URL, since it is what the gateway dials. A worker on this host or a private network would
// give every user's webhook a way inward; the check is repeated at every connection, this one only says it early.
import type { AppContext } from '../context.js';
import { userUrlFetch } from '../lib/safe-fetch.js';

export const WORKER_URL_INVALID = 'Worker 地址无效，仅支持 http/https';
export const WORKER_URL_FORBIDDEN = 'Worker 地址不能指向本机、内网或保留地址';

/** The message refusing `value` as WorkerUrl, or null (empty turns the worker off; an unresolved name is kept). */
export async function workerUrlProblem(ctx: AppContext, value: string): Promise<string | null> {
  const url = value.trim();
  if (!url) return null;
  const verdict = await userUrlFetch(ctx).check(url);
  if (verdict === 'invalid') return WORKER_URL_INVALID;
  if (verdict === 'forbidden') return WORKER_URL_FORBIDDEN;
  return null;
}
