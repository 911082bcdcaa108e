// What an upstream's fetch answer changes on the task rows of one channel. Items are matched to tasks by the
// upstream's id kept in private_data; an id the gateway does not know is ignored (new-api's Suno poller crashes on
// one). Every change is conditional on the task not being terminal yet, so a late or repeated answer changes
// nothing, and a FAILURE refunds through failTaskWithRefund's compare-and-set, once; a SUCCESS with the units the
// upstream deducted settles a ratio-priced task's charge through succeedTaskWithSettlement's, once.
import type { AppContext } from '../../context.js';
import { failTaskWithRefund } from './refund.js';
import { succeedTaskWithSettlement } from './settle.js';
import { TASK_STATUS, TERMINAL_STATUSES } from './status.js';

/** One task's state as a vendor adaptor reads it from the upstream's answer. */
export interface FetchedTaskState {
  upstreamId: string;
  status: string;
  failReason: string;
  data: unknown;
  /** the upstream's progress ("40%") while it works, where it reports one */
  progress?: string;
  /** the units a finished task was deducted upstream: a ratio-priced task is settled on them (settle.ts) */
  usedUnits?: number;
}

export interface PolledTask {
  /** tasks.id */
  id: number;
  private_data: string;
  /** tasks.action: a platform whose fetch path depends on it (Kling's text2video or image2video) reads it */
  action?: string;
}

export interface ApplyResult {
  changed: number;
  failed: number;
  ignored: number;
}

/** The upstream's id of a task, from its private data (empty when it has none). */
export function upstreamTaskId(privateData: string): string {
  try {
    const v = JSON.parse(privateData || '{}') as { upstream_task_id?: unknown };
    return typeof v.upstream_task_id === 'string' ? v.upstream_task_id : '';
  } catch {
    return '';
  }
}

export async function applyFetchedStates(
  ctx: AppContext,
  tasks: readonly PolledTask[],
  states: readonly FetchedTaskState[],
  now: number,
): Promise<ApplyResult> {
  const byUpstream = new Map<string, number>();
  for (const t of tasks) {
    const up = upstreamTaskId(t.private_data);
    if (up) byUpstream.set(up, t.id);
  }
  const result: ApplyResult = { changed: 0, failed: 0, ignored: 0 };
  for (const state of states) {
    const id = byUpstream.get(state.upstreamId);
    if (id === undefined) {
      result.ignored++;
      continue;
    }
    if (state.status === TASK_STATUS.failure) {
      if (await failTaskWithRefund(ctx, { id, reason: state.failReason }, now)) result.failed++;
      continue;
    }
    // an answer the adaptor could not read leaves the task as it is, to be asked again at the next tick
    if (state.status === TASK_STATUS.unknown) continue;
    const success = state.status === TASK_STATUS.success;
    if (success && state.usedUnits) {
      // the units the upstream deducted settle a ratio-priced task's charge, with the same compare-and-set
      if (await succeedTaskWithSettlement(ctx, id, state, now)) result.changed++;
      await markStarted(ctx, id, now);
      continue;
    }
    const changed = await ctx.db
      .updateTable('tasks')
      .set({
        status: state.status,
        data: JSON.stringify(state.data ?? null),
        updated_at: now,
        ...(success ? { progress: '100%', finish_time: now } : state.progress ? { progress: state.progress } : {}),
      })
      .where('id', '=', id)
      .where('status', 'not in', TERMINAL_STATUSES)
      .executeTakeFirst();
    if (Number(changed.numUpdatedRows) === 1) result.changed++;
    if (state.status === TASK_STATUS.inProgress || success) await markStarted(ctx, id, now);
  }
  return result;
}

/** the moment the upstream was first seen working on the task */
async function markStarted(ctx: AppContext, id: number, now: number): Promise<void> {
  await ctx.db.updateTable('tasks').set({ start_time: now }).where('id', '=', id).where('start_time', '=', 0).execute();
}
