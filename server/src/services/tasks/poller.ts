// The master node's task poller: every 15 s one tick. A tick fails and refunds the tasks left unfinished longer than
// TASK_TIMEOUT_MINUTES. Background jobs run on the master node only (as the log retention and the periodic channel
// test do); should two processes tick at once all the same, each terminal change is a compare-and-set on the task
// row (refund.ts), so a task is still refunded once.
import type { AppContext } from '../../context.js';
import { nowSec } from '../../lib/time.js';
import { failTaskWithRefund } from './refund.js';
import { TERMINAL_STATUSES } from './status.js';

export const TASK_POLL_INTERVAL_MS = 15_000;
/** timed-out tasks failed per tick at most (new-api's sweep takes 100 per cycle too) */
const TIMEOUT_BATCH = 100;
export const TASK_TIMEOUT_REASON = '任务超时';

export interface TickResult {
  timedOut: number;
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
  return { timedOut: await sweepTimedOutTasks(ctx, now) };
}

/** Schedules the ticks on the master node (none on a slave: returns false); stopped when the context closes. */
export function startTaskPoller(ctx: AppContext): boolean {
  if (ctx.config.nodeType !== 'master') return false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = tickTasks(ctx)
      .then((r) => {
        if (r.timedOut) ctx.log.info(r, 'tasks: timed-out tasks failed and refunded');
      })
      .catch((err) => ctx.log.warn({ err }, 'task poller tick failed'))
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(tick, TASK_POLL_INTERVAL_MS);
        timer.unref();
      });
  };
  timer = setTimeout(tick, TASK_POLL_INTERVAL_MS);
  timer.unref();
  ctx.onClose(async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  });
  return true;
}
