// The rows waiting in the SQLite writer worker (sqlite-worker-thread.ts) before it writes them. Rows marked `now` (a
// quiet gateway: log-writer.ts) are due at once; the others wait up to GROUP_MS (or until GROUP_ROWS rows wait) and are
// then handed out grouped by one of their columns (the log writer's: token_id). Why a busy gateway's log rows wait,
// and what it costs: docs/decisions/0011-log-row-grouping.md. Only the order in which rows are written changes: every
// value of a row, its created_at too, is the one it was queued with. Rows wait as the bytes they were handed over in
// (row-bytes.ts), outside the V8 heap; they are read into JS values one at a time, as the writer binds them.
import type { ChargeSql, RowsMessage } from './sqlite-worker-protocol.js';
import { RowBytesReader } from './row-bytes.js';

/**
 * Longest a row not marked to be written at once waits in the worker (or until GROUP_ROWS rows wait), so that rows
 * given a column to group by are written grouped by it. The log writer groups a busy gateway's rows by token, so that
 * each token's leaves in the token_id / token_name indexes take several rows per write instead of one; the
 * measurements and the price (rows readable up to a second later, up to GROUP_ROWS rows waiting) are in
 * docs/decisions/0011-log-row-grouping.md.
 */
export const GROUP_MS = 1000;
export const GROUP_ROWS = 8192;

/**
 * Rows of one statement, as the writer takes them (readRow): `n` rows of `cols` values each; each row's first `ins`
 * values are the insert's, the rest its charge (`charge`'s statements, or null). `key`: the column the rows are
 * grouped by, or -1.
 */
export interface QueuedRows {
  sql: string;
  cols: number;
  ins: number;
  charge: ChargeSql | null;
  key: number;
  n: number;
  /** rows read so far */
  done: number;
  /** the hand-overs the rows are in: one, or several grouped together */
  parts: RowBytesReader[];
  /** grouped rows: (part, byte offset) of each row in the order to write them; null: part 0's rows in order */
  order: Uint32Array | null;
  /** ungrouped rows: the byte where the next row starts */
  at: number;
}

/**
 * Reads an item's next row: its insert's values into `ins` (made `item.ins` long), the rest (its charge) into `rest`.
 * The caller checks `item.done < item.n` first.
 */
export function readRow(item: QueuedRows, ins: unknown[], rest: unknown[]): void {
  let part: RowBytesReader;
  let at: number;
  if (item.order) {
    part = item.parts[item.order[2 * item.done]];
    at = item.order[2 * item.done + 1];
  } else {
    part = item.parts[0];
    at = item.at;
  }
  ins.length = item.ins;
  at = part.read(at, item.ins, ins);
  if (item.cols > item.ins) at = part.read(at, item.cols - item.ins, rest);
  if (!item.order) item.at = at;
  item.done++;
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
    this.queue.push({
      sql: m.sql,
      cols: m.cols,
      ins: m.ins ?? m.cols,
      charge: m.charge ?? null,
      key: m.groupBy ?? -1,
      n: m.n,
      done: 0,
      parts: [new RowBytesReader(m.bytes)],
      order: null,
      at: 0,
    });
    this.queued += m.n;
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
    items: QueuedRows[];
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
      g = { first: item, items: [], n: 0 };
      bySql.set(k, g);
      out.push(g);
    }
    g.items.push(item);
    g.n += item.n - item.done;
  }
  const result: QueuedRows[] = [];
  for (const g of out) result.push('items' in g ? grouped(g.first, g.items, g.n) : g);
  return result;
}

/** Rows of hand-overs (each as it was added) as one item, in the order to write them: keys ascending, a key's rows as they came. */
function grouped(first: QueuedRows, items: QueuedRows[], n: number): QueuedRows {
  const { sql, cols, ins, charge, key } = first;
  const keys = new Float64Array(n);
  const refs = new Uint32Array(2 * n);
  const parts: RowBytesReader[] = [];
  let r = 0;
  for (const item of items) {
    const part = item.parts[0];
    const p = parts.push(part) - 1;
    let at = item.at;
    for (let i = item.done; i < item.n; i++) {
      keys[r] = part.numberAt(at, key);
      refs[2 * r] = p;
      refs[2 * r + 1] = at;
      at = part.skip(at, cols);
      r++;
    }
  }
  // ties by arrival, so a key's rows keep their order whatever the sort's stability
  const byKey = new Uint32Array(n);
  for (let i = 0; i < n; i++) byKey[i] = i;
  byKey.sort((a, b) => keys[a] - keys[b] || a - b);
  const order = new Uint32Array(2 * n);
  for (let i = 0; i < n; i++) {
    order[2 * i] = refs[2 * byKey[i]];
    order[2 * i + 1] = refs[2 * byKey[i] + 1];
  }
  return { sql, cols, ins, charge, key, n, done: 0, parts, order, at: 0 };
}
