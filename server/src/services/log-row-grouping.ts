// The rows waiting in the SQLite writer worker (sqlite-worker-thread.ts) before it writes them. Rows marked `now` (a
// quiet gateway: log-writer.ts) are due at once; the others wait up to GROUP_MS (or until GROUP_ROWS rows wait) and are
// then handed out grouped by one of their columns (the log writer's: token_id). Why a busy gateway's log rows wait,
// and what it costs: docs/decisions/0011-log-row-grouping.md. Only the order in which rows are written changes: every
// value of a row, its created_at too, is the one it was queued with.
import type { ChargeSql, RowsMessage } from './sqlite-worker-protocol.js';
import { CappedMap } from '../lib/bounded.js';

/**
 * Longest a row not marked to be written at once waits in the worker (or until GROUP_ROWS rows wait), so that rows
 * given a column to group by are written grouped by it. The log writer groups a busy gateway's rows by token, so that
 * each token's leaves in the token_id / token_name indexes take several rows per write instead of one; the
 * measurements and the price (rows readable up to a second later, up to GROUP_ROWS rows in this heap) are in
 * docs/decisions/0011-log-row-grouping.md.
 */
export const GROUP_MS = 1000;
export const GROUP_ROWS = 8192;
/** distinct repeated strings kept at most (the oldest forgotten first: usernames and models come from traffic) */
const SHARED_STRINGS = 20_000;

/**
 * Rows of one statement, as the writer takes them: `p` holds `cols` values per row from `at` on (the writer moves `at`
 * as it writes); each row's first `ins` values are the insert's, the rest its charge (`charge`'s statements, or null).
 * `key`: the column the rows are grouped by, or -1.
 */
export interface QueuedRows {
  sql: string;
  cols: number;
  ins: number;
  charge: ChargeSql | null;
  p: unknown[];
  at: number;
  key: number;
}

/** The rows waiting to be written, and when they are due. */
export interface RowQueue {
  /** Queues a message's rows; the queue's `due` callback runs (once, later) when they should be written. */
  add(m: RowsMessage): void;
  /** Everything queued, in the order to write it; the queue is empty afterwards. */
  take(): QueuedRows[];
  /** rows queued */
  readonly size: number;
}

export class RowGrouping implements RowQueue {
  private queue: QueuedRows[] = [];
  private queued = 0;
  private soon = false;
  private later: NodeJS.Timeout | null = null;
  /** Rows wait up to GROUP_MS in this heap; the strings that repeat from row to row (for log rows: user and token
   * names, model, group, the content line) are kept once each instead of once per row. */
  private readonly shared = new CappedMap<string, string>(SHARED_STRINGS);

  /** `due`: called when the queued rows should be written (it should call take()) */
  constructor(
    private readonly due: () => void,
    private readonly groupMs = GROUP_MS,
    private readonly groupRows = GROUP_ROWS,
  ) {}

  get size(): number {
    return this.queued;
  }

  add(m: RowsMessage): void {
    if (m.repeated) this.share(m.p, m.cols, m.repeated);
    this.queue.push({
      sql: m.sql,
      cols: m.cols,
      ins: m.ins ?? m.cols,
      charge: m.charge ?? null,
      p: m.p,
      at: 0,
      key: m.groupBy ?? -1,
    });
    this.queued += m.p.length / m.cols;
    if (this.queued >= this.groupRows || m.now) {
      if (!this.soon) {
        this.soon = true;
        setImmediate(this.due);
      }
    } else if (!this.later) this.later = setTimeout(this.due, this.groupMs);
  }

  take(): QueuedRows[] {
    this.soon = false;
    if (this.later) {
      clearTimeout(this.later);
      this.later = null;
    }
    this.queued = 0;
    const queue = this.queue;
    this.queue = [];
    return groupRows(queue);
  }

  private share(p: unknown[], cols: number, idx: readonly number[]): void {
    const shared = this.shared;
    for (let o = 0; o < p.length; o += cols) {
      for (const c of idx) {
        const v = p[o + c];
        if (typeof v !== 'string') continue;
        const s = shared.get(v);
        if (s !== undefined) p[o + c] = s;
        else shared.set(v, v);
      }
    }
  }
}

/**
 * The queued rows of one statement with a key become one item: keys in ascending order, each key's rows together in
 * arrival order. Items without a key keep their place.
 */
function groupRows(queue: QueuedRows[]): QueuedRows[] {
  let keyed = 0;
  for (const item of queue) if (item.key >= 0) keyed++;
  if (!keyed) return queue;
  interface Group {
    first: QueuedRows;
    parts: QueuedRows[];
    n: number;
  }
  const out: Array<QueuedRows | Group> = [];
  const bySql = new Map<string, Group>();
  for (const item of queue) {
    if (item.key < 0) {
      out.push(item);
      continue;
    }
    const k = item.sql + '|' + item.cols;
    let g = bySql.get(k);
    if (!g) {
      g = { first: item, parts: [], n: 0 };
      bySql.set(k, g);
      out.push(g);
    }
    g.parts.push(item);
    g.n += (item.p.length - item.at) / item.cols;
  }
  const result: QueuedRows[] = [];
  for (const g of out) {
    if (!('parts' in g)) {
      result.push(g);
      continue;
    }
    const { sql, cols, ins, charge, key } = g.first;
    // the rows' keys sorted (a stable sort: a key's rows keep their order), then the values copied once in that order
    const rows: Array<{ k: unknown; i: number; o: number }> = new Array(g.n);
    let r = 0;
    for (let i = 0; i < g.parts.length; i++) {
      const { p, at } = g.parts[i];
      for (let o = at; o < p.length; o += cols) rows[r++] = { k: p[o + key], i, o };
    }
    rows.sort((a, b) => ((a.k as number) < (b.k as number) ? -1 : (a.k as number) > (b.k as number) ? 1 : 0));
    const p: unknown[] = new Array(g.n * cols);
    let w = 0;
    for (const { i, o } of rows) {
      const src = g.parts[i].p;
      for (let j = 0; j < cols; j++) p[w++] = src[o + j];
    }
    result.push({ sql, cols, ins, charge, p, at: 0, key });
  }
  return result;
}
