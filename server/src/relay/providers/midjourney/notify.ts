// midjourney-proxy's notify callback (POST /mj/notify with the task's JSON). new-api's handler checks nothing: any
// caller that knows a task id rewrites that task, whoever owns it, with no refund and no state check (and its route
// is commented out). Ours: the hook the gateway gives the upstream carries the channel and a signature derived from
// a server secret; a callback must carry both, name a task that exists on that channel, and is applied with the
// poller's compare-and-set, so a repeated, late or out-of-order callback changes nothing and a failure refunds once.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MJ_TERMINAL_STATUSES } from './actions.js';
import { planMjPollUpdate, readMjTask, type MjRowSnapshot, type MjRowUpdate, type MjTaskState } from './task.js';

/** The signature of a channel's hook: HMAC-SHA256 of "mj-notify:<channel id>" under the server's secret, hex. */
export function mjNotifySignature(secret: string, channelId: number): string {
  return createHmac('sha256', secret).update(`mj-notify:${channelId}`).digest('hex');
}

/** The notifyHook to give the upstream for a submit on a channel (MjNotifyEnabled). */
export function mjNotifyHookUrl(serverAddress: string, channelId: number, secret: string): string {
  const base = serverAddress.replace(/\/+$/, '');
  return `${base}/mj/notify?channel=${channelId}&sig=${mjNotifySignature(secret, channelId)}`;
}

/** The row a callback is checked against (looked up by mj_id). */
export interface MjNotifyTask extends MjRowSnapshot {
  id: number;
  channel_id: number;
}

export type MjNotifyVerdict =
  | { ok: true; task: MjNotifyTask; state: MjTaskState }
  | { ok: false; status: number; body: { code: number; description: string } };

const refuse = (status: number, description: string): MjNotifyVerdict => ({
  ok: false,
  status,
  body: { code: 4, description },
});

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Checks a callback: the query's channel and sig (401 when missing or wrong, or when no secret is configured), the
 * body (400), the task (404 when no row has its id or the row belongs to another channel: the same answer, so a
 * caller cannot probe ids).
 */
export async function verifyMjNotify(
  query: Record<string, unknown>,
  body: unknown,
  secret: string,
  findTask: (mjId: string) => Promise<MjNotifyTask | null | undefined>,
): Promise<MjNotifyVerdict> {
  const channelText = typeof query.channel === 'string' ? query.channel : '';
  const sig = typeof query.sig === 'string' ? query.sig : '';
  if (!secret || !/^[1-9]\d{0,15}$/.test(channelText) || !sig) return refuse(401, 'invalid_notify_signature');
  const channelId = Number(channelText);
  if (!sameHex(sig, mjNotifySignature(secret, channelId))) return refuse(401, 'invalid_notify_signature');
  const state = readMjTask(body);
  if (!state) return refuse(400, 'bind_request_body_failed');
  const task = await findTask(state.id);
  if (!task || task.channel_id !== channelId) return refuse(404, 'midjourney_task_not_found');
  return { ok: true, task, state };
}

function percent(progress: string): number {
  const m = /^(\d{1,3})%$/.exec(progress);
  return m ? Number(m[1]) : -1;
}

/**
 * The row update a verified callback makes, or null when it changes nothing: the row is terminal already, or the
 * callback is older than what is stored (its progress is lower while neither is terminal).
 */
export function applyMjNotify(task: MjNotifyTask, state: MjTaskState, now: number): MjRowUpdate | null {
  if (MJ_TERMINAL_STATUSES.includes(task.status)) return null;
  if (!MJ_TERMINAL_STATUSES.includes(state.status) && !state.failReason) {
    const stored = percent(task.progress);
    const incoming = percent(state.progress);
    if (incoming >= 0 && stored >= 0 && incoming < stored) return null;
  }
  // a callback never times a task out: the poller does that
  return planMjPollUpdate(task, state, now, Number.POSITIVE_INFINITY);
}
