// Log retention (new-api-compat.md §5.11): consume and error rows of `logs` older than `LogRetentionDays`, and
// dashboard buckets of `quota_data` older than `QuotaDataRetentionDays`, are deleted by the master node in the
// background. Both options are 0 (keep everything) by default, as new-api keeps everything.
//
// Deletes go in small batches (ids picked first, then deleted by id) with a pause between batches, so no statement
// holds a lock for long: on SQLite each batch takes the file's write lock for one short statement and the log writer
// slips in between; on PostgreSQL and MySQL only the batch's rows are locked. Top-up, admin and system rows (types
// 1, 3, 4) are never deleted: they are the account's history, and they are few.
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import type { Database } from '../db/schema.js';
import { nowSec } from '../lib/time.js';
import { LOG_TYPE_CONSUME } from './user-logs.js';

/** new-api's LogTypeError: a failed relay request's row (written by new-api; kept here for databases it wrote). */
export const LOG_TYPE_ERROR = 5;
export const RETAINED_LOG_TYPES = [LOG_TYPE_CONSUME, LOG_TYPE_ERROR];

const DAY_SEC = 86_400;

export interface RetentionSettings {
  /** rows deleted per statement */
  batchRows: number;
  /** pause between two batches, ms */
  pauseMs: number;
  /** first run after start, ms (not at boot: the process is warming up) */
  firstRunMs: number;
  /** between runs, ms */
  everyMs: number;
  /** the clock, unix seconds (tests fix it) */
  now: () => number;
}

export const DEFAULT_RETENTION: RetentionSettings = {
  batchRows: 1000,
  pauseMs: 100,
  firstRunMs: 60_000,
  everyMs: 3_600_000,
  now: nowSec,
};

export interface RetentionResult {
  logs: number;
  quotaData: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whole days from an option; anything not a positive number means "keep forever". */
function retentionDays(ctx: AppContext, key: string): number {
  const days = Math.floor(ctx.options.num(key, 0));
  return days > 0 ? days : 0;
}

type Table = 'logs' | 'quota_data';

/** Deletes the table's rows matching the cutoff, `batchRows` at a time; stops early when `stopped()` says so. */
async function deleteInBatches(
  db: Kysely<Database>,
  table: Table,
  cutoff: number,
  s: Pick<RetentionSettings, 'batchRows' | 'pauseMs'>,
  stopped: () => boolean,
): Promise<number> {
  let deleted = 0;
  while (!stopped()) {
    let pick = db.selectFrom(table).select('id').where('created_at', '<', cutoff);
    if (table === 'logs') pick = pick.where('type', 'in', RETAINED_LOG_TYPES);
    const ids = (await pick.limit(s.batchRows).execute()).map((r) => Number(r.id));
    if (!ids.length) break;
    // the cutoff again: a row is never deleted that the pick did not mean (ids are not reused, but be exact)
    const res = await db.deleteFrom(table).where('id', 'in', ids).where('created_at', '<', cutoff).executeTakeFirst();
    deleted += Number(res.numDeletedRows);
    if (ids.length < s.batchRows) break;
    if (s.pauseMs > 0) await sleep(s.pauseMs);
  }
  return deleted;
}

/**
 * One retention pass at the clock's time. A slave node deletes nothing (background jobs are the master's, as
 * migrations are), whatever it is asked.
 */
export async function runLogRetention(
  ctx: AppContext,
  settings: Partial<RetentionSettings> = {},
  stopped: () => boolean = () => false,
): Promise<RetentionResult> {
  const s = { ...DEFAULT_RETENTION, ...settings };
  const result: RetentionResult = { logs: 0, quotaData: 0 };
  if (ctx.config.nodeType !== 'master') return result;
  const now = s.now();
  const logDays = retentionDays(ctx, 'LogRetentionDays');
  if (logDays) result.logs = await deleteInBatches(ctx.logDb, 'logs', now - logDays * DAY_SEC, s, stopped);
  const dataDays = retentionDays(ctx, 'QuotaDataRetentionDays');
  if (dataDays) result.quotaData = await deleteInBatches(ctx.db, 'quota_data', now - dataDays * DAY_SEC, s, stopped);
  return result;
}

/**
 * Schedules the passes on the master node (none on a slave: returns false). The options are read at each pass, so a
 * change in the console applies from the next one. A stop ends a pass between two batches.
 */
export function startLogRetention(ctx: AppContext, settings: Partial<RetentionSettings> = {}): boolean {
  if (ctx.config.nodeType !== 'master') return false;
  const s = { ...DEFAULT_RETENTION, ...settings };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const pass = () => {
    running = runLogRetention(ctx, s, () => stopped)
      .then((r) => {
        if (r.logs || r.quotaData) ctx.log.info(r, 'log retention: old rows deleted');
      })
      .catch((err) => ctx.log.warn({ err }, 'log retention pass failed'))
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(pass, s.everyMs);
        timer.unref();
      });
  };
  timer = setTimeout(pass, s.firstRunMs);
  timer.unref();
  ctx.onClose(async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  });
  return true;
}
