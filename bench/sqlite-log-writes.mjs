// `node bench/sqlite-log-writes.mjs`: the CPU cost of one consume-log row written the way the SQLite writer worker
// writes it (services/sqlite-worker.ts), for WAL settings side by side. Needs the built server (npm run build -w server).
//
// Each case creates a fresh database with the project's migrations, then inserts LOG_ROWS rows (default 100,000) with
// 1,000 users and tokens in turn, TXN rows per transaction (default 40: what the worker commits on average when the
// relay's reservations keep asking for the write lock), a PASSIVE checkpoint every CK rows (default 12,000: one
// second of the worker's checkpoint timer at a 0-ms-upstream load here) and a RESTART one once the WAL holds
// RESTART_FRAMES frames, as the worker does. Rows are the log writer's own INSERT and values (SQLITE_ROW_INSERT,
// pushSqliteValues). It prints the process CPU (user + system) per row, the WAL file's largest size and
// the wall time per row. Cases alternate ROUNDS times (default 3), because this machine's timing drifts.
//
// Env: LOG_ROWS, TXN, CK, ROUNDS, CASES (space-separated journal_size_limit values in MB, default "64 512").
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../server/dist/db/connect.js';
import { migrateToLatest } from '../server/dist/db/migrate.js';
import { pushSqliteValues, SQLITE_ROW_INSERT } from '../server/dist/services/log-writer.js';
import { RESTART_FRAMES } from '../server/dist/services/sqlite-worker.js';

const env = process.env;
const ROWS = Number(env.LOG_ROWS ?? 100_000);
const TXN = Number(env.TXN ?? 40);
const CK = Number(env.CK ?? 12_000);
const ROUNDS = Number(env.ROUNDS ?? 3);
const CASES = (env.CASES ?? '64 512').split(/\s+/).filter(Boolean).map(Number);
const OTHER = '{"frt":-1000,"model_ratio":0.075,"group_ratio":1,"completion_ratio":4,"cache_tokens":0,"cache_ratio":1,"model_price":-1,"admin_info":{"use_channel":["17"]}}';

async function run(walLimitMb) {
  const dir = mkdtempSync(join(tmpdir(), 'gw-logbench-'));
  const path = join(dir, 'logs.db');
  const { db } = await openDatabase({ dsn: '', sqlitePath: path });
  await migrateToLatest(db, 'sqlite');
  await db.destroy();
  const w = new Database(path);
  w.pragma('synchronous = NORMAL');
  w.pragma('wal_autocheckpoint = 0');
  w.pragma(`journal_size_limit = ${walLimitMb * 1024 * 1024}`);
  const insert = w.prepare(SQLITE_ROW_INSERT);
  const begin = w.prepare('BEGIN IMMEDIATE');
  const commit = w.prepare('COMMIT');
  let maxWal = 0;
  let sinceCheckpoint = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let n = 0; n < ROWS; ) {
    begin.run();
    for (let k = 0; k < TXN && n < ROWS; k++, n++) {
      const u = n % 1000;
      const values = [];
      pushSqliteValues(values, {
        user_id: u + 1,
        created_at: 1_800_000_000 + Math.floor(n / CK),
        type: 2,
        content: '模型倍率 0.08，补全倍率 4.00，分组倍率 1.00',
        username: `bench${u}`,
        token_name: `bench-token-${u}`,
        model_name: 'gpt-4o-mini',
        quota: 120,
        prompt_tokens: 240,
        completion_tokens: 20,
        use_time: 0,
        is_stream: false,
        channel_id: (u % 100) + 1,
        token_id: u + 1,
        group: 'default',
        other: OTHER,
      });
      insert.run(values);
    }
    commit.run();
    if ((sinceCheckpoint += TXN) >= CK) {
      sinceCheckpoint = 0;
      maxWal = Math.max(maxWal, statSync(`${path}-wal`).size);
      const r = w.pragma('wal_checkpoint(PASSIVE)')[0];
      if (r.log >= RESTART_FRAMES && r.checkpointed === r.log) w.pragma('wal_checkpoint(RESTART)');
    }
  }
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  w.close();
  rmSync(dir, { recursive: true, force: true });
  return { cpu: (cpu.user + cpu.system) / ROWS, sys: cpu.system / ROWS, wall: (wall * 1000) / ROWS, maxWal: maxWal / 1048576 };
}

console.log(`${ROWS} rows, ${TXN} per transaction, checkpoint every ${CK} rows`);
for (let r = 1; r <= ROUNDS; r++) {
  for (const mb of CASES) {
    const x = await run(mb);
    console.log(`round ${r}  journal_size_limit ${String(mb).padStart(4)} MB: ${x.cpu.toFixed(1)} µs CPU per row (system ${x.sys.toFixed(1)}), largest WAL ${x.maxWal.toFixed(0)} MB, ${x.wall.toFixed(1)} µs wall per row`);
  }
}
