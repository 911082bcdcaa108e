// The rows waiting in the SQLite writer worker (services/log-row-grouping.ts), on their own: when they are due, the
// order they are handed out in, and that grouping changes only that order (each row keeps its values, its created_at
// too). The worker's writing of them is covered in test/db/sqlite-writer.test.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { RowGrouping } from '../../src/services/log-row-grouping.js';
import type { RowsMessage } from '../../src/services/sqlite-worker-protocol.js';

const SQL = 'INSERT INTO t (token_id, created_at, quota) VALUES (?, ?, ?)';
/** rows of (token_id, created_at, quota) */
const message = (rows: Array<[number, number, number]>, how: Partial<RowsMessage> = {}): RowsMessage => ({
  t: 'rows',
  sql: SQL,
  cols: 3,
  p: rows.flat(),
  ...how,
});
const valuesOf = (g: RowGrouping) => g.take().map((item) => item.p);

describe('log row grouping', () => {
  it('hands out a statement\'s rows by key, each key\'s in arrival order, every row with its own created_at', () => {
    const g = new RowGrouping(() => {}, 60_000);
    g.add(message([[5, 1_700_000_001, 1], [2, 1_700_000_002, 2], [5, 1_700_000_003, 3]], { groupBy: 0 }));
    g.add(message([[2, 1_700_000_009, 4], [1, 1_700_000_004, 5]], { groupBy: 0 }));
    expect(g.size).toBe(5);
    const out = g.take();
    expect(g.size).toBe(0);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ sql: SQL, cols: 3, ins: 3, charge: null, at: 0, key: 0 });
    // token 1, then 2 (arrival order: quota 2 before 4), then 5; created_at travels with its row
    expect(out[0].p).toEqual([1, 1_700_000_004, 5, 2, 1_700_000_002, 2, 2, 1_700_000_009, 4, 5, 1_700_000_001, 1, 5, 1_700_000_003, 3]);
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

  it('keeps one copy of a text repeated from row to row, with the values unchanged', () => {
    const g = new RowGrouping(() => {}, 60_000);
    const name = (n: number) => `token ${n}`;
    g.add({ t: 'rows', sql: SQL, cols: 2, p: [1, name(1), 2, name(1)], groupBy: 0, repeated: [1] });
    const [item] = g.take();
    expect(item.p).toEqual([1, 'token 1', 2, 'token 1']);
  });

  it('keeps at most its bound of shared texts however many distinct ones come, and still shares the recent ones', () => {
    const g = new RowGrouping(() => {}, 60_000, 1_000_000);
    const shared = g['shared'];
    const n = shared.max + 5000;
    for (let i = 0; i < n; i++) g.add({ t: 'rows', sql: SQL, cols: 2, p: [i, `user ${i}`], groupBy: 0, repeated: [1] });
    expect(shared.size).toBe(shared.max);
    g.take();
    // a text seen lately is still kept once: the row gets the kept copy, with the same value
    const again = ['user', String(n - 1)].join(' ');
    g.add({ t: 'rows', sql: SQL, cols: 2, p: [1, again], groupBy: 0, repeated: [1] });
    expect(g.take()[0].p).toEqual([1, `user ${n - 1}`]);
    expect(shared.size).toBe(shared.max);
  });
});
