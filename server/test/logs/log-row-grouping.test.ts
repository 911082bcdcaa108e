// The rows waiting in the SQLite writer worker (services/log-row-grouping.ts), on their own: when they are due, the
// order they are handed out in, and that grouping changes only that order (each row keeps its values, its created_at
// too). The worker's writing of them is covered in test/db/sqlite-writer.test.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { readRow, RowGrouping, type QueuedRows } from '../../src/services/log-row-grouping.js';
import { rowBytesOf } from '../../src/services/row-bytes.js';
import type { RowsMessage } from '../../src/services/sqlite-worker-protocol.js';

const SQL = 'INSERT INTO t (token_id, created_at, quota) VALUES (?, ?, ?)';
/** rows of (token_id, created_at, quota) */
const message = (rows: Array<[number, number, number]>, how: Partial<RowsMessage> = {}): RowsMessage => ({
  t: 'rows',
  sql: SQL,
  cols: 3,
  n: rows.length,
  bytes: rowBytesOf(rows.flat()),
  ...how,
});
/** an item's rows as the writer reads them, one after the other (insert values, then the charge's) */
const rowsOf = (item: QueuedRows): unknown[] => {
  const out: unknown[] = [];
  const ins: unknown[] = [];
  const rest: unknown[] = [];
  while (item.done < item.n) {
    readRow(item, ins, rest);
    out.push(...ins, ...rest.slice(0, item.cols - item.ins));
  }
  return out;
};
const valuesOf = (g: RowGrouping) => g.take().map(rowsOf);

describe('log row grouping', () => {
  it('hands out a statement\'s rows by key, each key\'s in arrival order, every row with its own created_at', () => {
    const g = new RowGrouping(() => {}, 60_000);
    g.add(message([[5, 1_700_000_001, 1], [2, 1_700_000_002, 2], [5, 1_700_000_003, 3]], { groupBy: 0 }));
    g.add(message([[2, 1_700_000_009, 4], [1, 1_700_000_004, 5]], { groupBy: 0 }));
    expect(g.size).toBe(5);
    const out = g.take();
    expect(g.size).toBe(0);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ sql: SQL, cols: 3, ins: 3, charge: null, n: 5, done: 0, key: 0 });
    // token 1, then 2 (arrival order: quota 2 before 4), then 5; created_at travels with its row
    expect(rowsOf(out[0])).toEqual([1, 1_700_000_004, 5, 2, 1_700_000_002, 2, 2, 1_700_000_009, 4, 5, 1_700_000_001, 1, 5, 1_700_000_003, 3]);
    expect(g.take()).toEqual([]);
  });

  it('leaves rows without a key where they are, and groups each statement apart', () => {
    const g = new RowGrouping(() => {}, 60_000);
    const other = 'INSERT INTO u (token_id, created_at, quota) VALUES (?, ?, ?)';
    g.add(message([[9, 10, 1]], { now: true }));
    g.add(message([[3, 11, 2]], { groupBy: 0 }));
    g.add(message([[2, 12, 3]], { groupBy: 0, sql: other }));
    g.add(message([[1, 13, 4]], { groupBy: 0 }));
    expect(valuesOf(g)).toEqual([[9, 10, 1], [1, 13, 4, 3, 11, 2], [2, 12, 3]]);
  });

  it('rows marked now are due at once, others after the grouping window or once enough wait', async () => {
    let due = 0;
    const g = new RowGrouping(() => due++, 200, 4);
    g.add(message([[1, 1, 1]], { groupBy: 0 }));
    await sleep(20);
    expect(due).toBe(0);
    // the window's timer fires on its own (generous margin for a loaded machine)
    for (let i = 0; i < 100 && !due; i++) await sleep(20);
    expect(due).toBe(1);
    g.take();

    g.add(message([[1, 1, 1]], { now: true }));
    g.add(message([[2, 2, 2]], { now: true }));
    await sleep(5);
    expect(due).toBe(2); // once for both
    g.take();

    g.add(message([[1, 1, 1], [2, 2, 2], [3, 3, 3], [4, 4, 4]], { groupBy: 0 }));
    await sleep(5);
    expect(due).toBe(3);
    g.take();

    // take() cancels the window: no call for rows already taken
    g.add(message([[1, 1, 1]], { groupBy: 0 }));
    g.take();
    await sleep(400);
    expect(due).toBe(3);
  });

  it('waits with the rows as bytes and gives every value back as it came, the insert\'s apart from the charge\'s', () => {
    const g = new RowGrouping(() => {}, 60_000);
    const values = [
      [7, 2_147_483_647, -2_147_483_648, 2 ** 40, -0.5, 'ünïcødé 模型 🎉', '', null, 'node-a'],
      [3, 0, 1, 1e-9, Number.MAX_SAFE_INTEGER, 'x'.repeat(70_000), '{"a":1}', null, 'node-b'],
    ];
    const m: RowsMessage = { t: 'rows', sql: SQL, cols: 9, n: 2, bytes: rowBytesOf(values.flat()), groupBy: 0, ins: 6 };
    // the rows are held in the message's bytes, not as JS values
    expect(m.bytes.buffer.byteLength).toBe(m.bytes.byteLength);
    g.add(m);
    const [item] = g.take();
    const ins: unknown[] = [];
    const rest: unknown[] = [];
    readRow(item, ins, rest);
    expect([ins, rest.slice(0, 3)]).toEqual([values[1].slice(0, 6), values[1].slice(6)]);
    readRow(item, ins, rest);
    expect([ins, rest.slice(0, 3)]).toEqual([values[0].slice(0, 6), values[0].slice(6)]);
    expect(item.done).toBe(item.n);
  });

  it('booleans travel as 1 and 0, undefined as null', () => {
    const g = new RowGrouping(() => {}, 60_000);
    g.add({ t: 'rows', sql: SQL, cols: 3, n: 1, bytes: rowBytesOf([true, false, undefined]), now: true });
    expect(valuesOf(g)).toEqual([[1, 0, null]]);
  });
});
