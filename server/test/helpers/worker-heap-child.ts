// Run as a process of its own with the server's V8 flags (test/db/sqlite-writer.test.ts): a test server's SQLite
// writer worker is handed a busy gateway's rows to hold for grouping, and the worker's new space is printed as JSON.
// Only a process started with --max-semi-space-size shows what that process-wide flag does to the worker's isolate.
import { sqliteHandle } from '../../src/db/connect.js';
import type { NewLog } from '../../src/db/schema.js';
import { pushSqliteValues, SQLITE_ROW_COLUMNS, SQLITE_ROW_INSERT } from '../../src/services/log-writer.js';
import { RowBytesWriter } from '../../src/services/row-bytes.js';
import { sqliteWorker } from '../../src/services/sqlite-worker.js';
import { startTestServer } from './server.js';

const s = await startTestServer({ kind: 'sqlite' });
const worker = (await sqliteWorker(s.ctx, sqliteHandle(s.ctx.db)!))!;
const atStart = (await worker.heap())!.newSpace;
let largest = 0;
for (let k = 0; k < 8; k++) {
  const rows = new RowBytesWriter();
  for (let i = 0; i < 2000; i++) {
    const row: NewLog = {
      user_id: 900_020,
      created_at: 1_700_000_000 + i,
      type: 2,
      content: `模型倍率 1.00，补全倍率 1.00，分组倍率 1.00 (${k}/${i})`,
      username: `user-${i % 97}`,
      token_name: `token-${i % 500}`,
      model_name: 'gpt-4o-mini',
      token_id: i % 500,
      quota: i,
      other: JSON.stringify({ model_ratio: 0.075, group_ratio: 1, completion_ratio: 4, frt: i, request: k }),
    };
    pushSqliteValues(rows, row);
  }
  worker.insert(SQLITE_ROW_INSERT, SQLITE_ROW_COLUMNS.length, rows.take(), 2000, {
    groupBy: SQLITE_ROW_COLUMNS.indexOf('token_id'),
  });
  largest = Math.max(largest, (await worker.heap())!.newSpace);
}
await worker.flush();
largest = Math.max(largest, (await worker.heap())!.newSpace);
const written = await s.ctx.logDb
  .selectFrom('logs')
  .select((eb) => eb.fn.countAll<number>().as('n'))
  .where('user_id', '=', 900_020)
  .executeTakeFirstOrThrow();
await s.close();
process.stdout.write(JSON.stringify({ atStart, newSpace: largest, rows: Number(written.n) }) + '\n');
