// The task poller: every 15 s one tick (TASK_POLL_INTERVAL; the e2e run shortens it), by one instance of the
// deployment at a time (the lease, lease.ts; the master flag alone is not trusted to be unique). A tick asks the upstreams for the states of the unfinished tasks (the steps
// the relay registers: relay/tasks/poll.ts, as services/ cannot import the relay) and fails and refunds the tasks left
// unfinished longer than TASK_TIMEOUT_MINUTES. Should two processes tick at once all the same (a lease that expired
// under a stalled holder), each terminal change is a compare-and-set on the task row (refund.ts), so a task is still
// refunded once.
import type { AppContext } from '../../context.js';
import { nowSec } from '../../lib/time.js';
import { failTaskWithRefund } from './refund.js';
import { acquireTaskLease, newLeaseHolder, releaseTaskLease } from './lease.js';
import { TERMINAL_STATUSES } from './status.js';

/** timed-out tasks failed per tick at most (new-api's sweep takes 100 per cycle too) */
const TIMEOUT_BATCH = 100;
export const TASK_TIMEOUT_REASON = '任务超时';

export interface TickResult {
  timedOut: number;
  /** whether this instance held the lease and ran the tick */
  leased: boolean;
}

/** One step of a tick run before the timeout sweep: the upstream polls of the task platforms. */
export type TaskPollStep = (ctx: AppContext, now: number) => Promise<unknown>;
const STEPS = new Set<TaskPollStep>();

/** Adds a step to every tick (idempotent: the relay registers its poll once per context). */
export function addTaskPollStep(step: TaskPollStep): void {
  STEPS.add(step);
}

const holders = new WeakMap<AppContext, string>();

/** This context's name as a lease holder. */
export function leaseHolderOf(ctx: AppContext): string {
  let h = holders.get(ctx);
  if (!h) holders.set(ctx, (h = newLeaseHolder()));
  return h;
}

/** Fails and refunds the unfinished tasks submitted more than TASK_TIMEOUT_MINUTES before `now` (seconds). */
export async function sweepTimedOutTasks(ctx: AppContext, now: number): Promise<number> {
  const minutes = ctx.config.taskTimeoutMinutes;
  if (minutes <= 0) return 0;
  const rows = await ctx.db
    .selectFrom('tasks')
    .select('id')
    .where('status', 'not in', TERMINAL_STATUSES)
    .where('submit_time', '>', 0)
    .where('submit_time', '<', now - minutes * 60)
    .orderBy('id')
    .limit(TIMEOUT_BATCH)
    .execute();
  let failed = 0;
  for (const row of rows) {
    if (await failTaskWithRefund(ctx, { id: Number(row.id), reason: TASK_TIMEOUT_REASON }, now)) failed++;
  }
  return failed;
}

/** One pass of the poller at the clock's time (tests call it directly with their own clock). */
export async function tickTasks(ctx: AppContext, now = nowSec()): Promise<TickResult> {
  if (!(await acquireTaskLease(ctx, leaseHolderOf(ctx), now))) return { timedOut: 0, leased: false };
  for (const step of STEPS) {
    // one platform's trouble does not stop the others nor the sweep
    await step(ctx, now).catch((err: unknown) => ctx.log.warn({ err }, 'task poll step failed'));
  }
  return { timedOut: await sweepTimedOutTasks(ctx, now), leased: true };
}

/**
 * Schedules the ticks on the master node (none on a slave: returns false; the lease then picks one master of several);
 * stopped when the context closes, giving the lease up.
 */
export function startTaskPoller(ctx: AppContext): boolean {
  if (ctx.config.nodeType !== 'master') return false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const intervalMs = ctx.config.taskPollIntervalSec * 1000;
  const tick = () => {
    running = tickTasks(ctx)
      .then((r) => {
        if (r.timedOut) ctx.log.info(r, 'tasks: timed-out tasks failed and refunded');
      })
      .catch((err) => ctx.log.warn({ err }, 'task poller tick failed'))
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(tick, intervalMs);
        timer.unref();
      });
  };
  timer = setTimeout(tick, intervalMs);
  timer.unref();
  ctx.onClose(async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
    await releaseTaskLease(ctx, leaseHolderOf(ctx)).catch(() => undefined);
  });
  return true;
}
