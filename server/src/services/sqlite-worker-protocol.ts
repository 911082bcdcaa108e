// What the main thread (sqlite-worker.ts) and the SQLite writer worker (sqlite-worker-thread.ts) tell each other, and
// the settings both sides need. Imported by the worker too: it must stay free of anything that opens the database or
// pulls in the application.

/** WAL frames after which the worker makes the WAL start over (see checkpoint() in sqlite-worker-thread.ts) */
export const RESTART_FRAMES = 10_000;
/**
 * Bytes the WAL file is cut back to when it starts over (it keeps its largest size otherwise). Under a steady load the
 * WAL holds a second of commits when it starts over (each log row dirties a page in six indexes keyed by user, token
 * or channel). With a limit below that size, every restart truncated it, and the next second of commits had the file
 * system allocate those blocks again, which cost the worker CPU per row and the main thread its ftruncate
 * (`node bench/sqlite-log-writes.mjs`: docs/perf/log-writer.md).
 */
export const WAL_SIZE_LIMIT = 512 * 1024 * 1024;

/**
 * The statements of a charge (log-writer.ts, addCharged): the settlement's single-row UPDATEs (params: the values,
 * then the id), the hold journal's insert (node, seq, holds), and its read and delete of a node's rows (compaction).
 */
export interface ChargeSql {
  token: string;
  user: string;
  channel: string;
  journal: string;
  read: string;
  clear: string;
}

/**
 * How queued rows are written: `now`: at once; otherwise they wait (log-row-grouping.ts) to be written grouped by the
 * value of column `groupBy`. `repeated`: columns whose text repeats from row to row. `ins` and `charge`: each row's
 * first `ins` values are the insert's, the rest a charge written by `charge`'s statements in the same transaction as
 * the row (see addCharge in sqlite-worker-thread.ts).
 */
export interface RowsHow {
  now?: boolean;
  groupBy?: number;
  repeated?: readonly number[];
  ins?: number;
  charge?: ChargeSql;
}

/** rows for `sql` (one row's placeholders), `cols` values per row, one row after the other in `p` */
export interface RowsMessage extends RowsHow {
  t: 'rows';
  sql: string;
  cols: number;
  p: unknown[];
}

export interface WorkerSetup {
  /** the SQLite file */
  path: string;
  /** the file's write lock (db/sqlite-write-lock.ts) */
  lock: SharedArrayBuffer;
  checkpointMs: number;
}

/** the worker isolate's heap as it sees it: the resourceLimits it was given, and its new space's size in bytes */
export interface WorkerHeap {
  maxYoungGenerationSizeMb: number;
  newSpace: number;
}

export type ToWorker = RowsMessage | { t: 'flush'; id: number } | { t: 'heap'; id: number } | { t: 'stop' };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'flushed'; id: number }
  | { t: 'heap'; id: number; heap: WorkerHeap }
  | { t: 'error'; message: string; rows: number }
  | { t: 'stopped' };
