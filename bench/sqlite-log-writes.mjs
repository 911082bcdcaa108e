// `node bench/sqlite-log-writes.mjs`: the CPU cost of one consume-log row written the way the SQLite writer worker
// writes it (services/sqlite-worker.ts), for settings side by side. Needs the built server (npm run build -w server).
//
// Each case creates a fresh database with the project's migrations (and PRE rows already in `logs`, untimed), then
// inserts LOG_ROWS rows (default 100,000) of 1,000 tokens in turn, TXN rows per transaction (default 40: what the
// worker commits on average when the relay's reservations keep asking for the write lock), a PASSIVE checkpoint every
// CK rows (default 12,000: one second of the worker's checkpoint timer at a 0-ms-upstream load here) and a RESTART one
// once the WAL holds RESTART_FRAMES frames, as the worker does. Rows are the log writer's own INSERT and values
// (SQLITE_ROW_INSERT, pushSqliteValues). With FOREIGN=1 a second connection commits an UPDATE before each transaction,
// as the relay's reservations do (in WAL mode that empties the writer's page cache). A case's GROUP is the window of
// rows written grouped by token (0: in the order they came; the worker groups a busy gateway's rows of up to a second).
// It prints the process CPU (user + system) per row, the WAL file's largest size and the wall time per row. Cases
// alternate ROUNDS times (default 3), because this machine's timing drifts.
//
// Env: LOG_ROWS, PRE (0), TXN, CK, FOREIGN (0), ROUNDS, CASES (space-separated journal_size_limit values in MB, default
// "64 512"), GROUP_WINDOWS (space-separated windows, default "0"). E.g. the grouping as measured for sqlite-worker.ts:
// PRE=200000 LOG_ROWS=60000 FOREIGN=1 CASES=512 GROUP_WINDOWS="0 7000" node bench/sqlite-log-writes.mjs
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../server/dist/db/connect.js';
import { migrateToLatest } from '../server/dist/db/migrate.js';
import { pushSqliteValues, SQLITE_ROW_COLUMNS, SQLITE_ROW_INSERT } from '../server/dist/services/log-writer.js';
import { RESTART_FRAMES } from '../server/dist/services/sqlite-worker.js';

const env = process.env;
const ROWS = Number(env.LOG_ROWS ?? 100_000);
const PRE = Number(env.PRE ?? 0);
const TXN = Number(env.TXN ?? 40);
const CK = Number(env.CK ?? 12_000);
const FOREIGN = env.FOREIGN === '1';
const ROUNDS = Number(env.ROUNDS ?? 3);
const CASES = (env.CASES ?? '64 512').split(/\s+/).filter(Boolean).map(Number);
const GROUPS = (env.GROUP_WINDOWS ?? '0').split(/\s+/).filter(Boolean).map(Number);
const OTHER =
  '{"frt":-1000,"model_ratio":0.075,"group_ratio":1,"completion_ratio":4,"cache_tokens":0,"cache_ratio":1,"model_price":-1,"admin_info":{"use_channel":["17"]}}';
const TOKEN = SQLITE_ROW_COLUMNS.indexOf('token_id');

/** row n's values: user, token and channel in turn */
function values(n) {
  const u = n % 1000;
  const out = [];
  pushSqliteValues(out, {
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
  return out;
}

async function run(walLimitMb, group) {
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
  if (PRE) {
    w.exec('BEGIN');
    for (let n = 0; n < PRE; n++) insert.run(values(n));
    w.exec('COMMIT');
    w.pragma('wal_checkpoint(TRUNCATE)');
  }
  const other = FOREIGN ? new Database(path) : null;
  const otherWrite = other?.prepare("UPDATE options SET value = value WHERE key = 'bench'");
  other?.prepare("INSERT INTO options (key, value) VALUES ('bench', '0')").run();
  const begin = w.prepare('BEGIN IMMEDIATE');
  const commit = w.prepare('COMMIT');
  let maxWal = 0;
  let sinceCheckpoint = 0;
  const window = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let n = PRE; n < PRE + ROWS;) {
    otherWrite?.run();
    begin.run();
    for (let k = 0; k < TXN && n < PRE + ROWS; k++, n++) {
      if (!group) {
        insert.run(values(n));
        continue;
      }
      if (!window.length) {
        for (let j = n; j < Math.min(n + group, PRE + ROWS); j++) window.push(values(j));
        window.sort((a, b) => a[TOKEN] - b[TOKEN]); // stable: a token's rows keep their order
        window.reverse();
      }
      insert.run(window.pop());
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
  other?.close();
  w.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    cpu: (cpu.user + cpu.system) / ROWS,
    sys: cpu.system / ROWS,
    wall: (wall * 1000) / ROWS,
    maxWal: maxWal / 1048576,
  };
}

console.log(
  `${ROWS} rows (${PRE} in the table before), ${TXN} per transaction, checkpoint every ${CK} rows${FOREIGN ? ', another connection committing between transactions' : ''}`,
);
for (let r = 1; r <= ROUNDS; r++) {
  for (const mb of CASES) {
    for (const group of GROUPS) {
      const x = await run(mb, group);
      console.log(
        `round ${r}  journal_size_limit ${String(mb).padStart(4)} MB, ${group ? `grouped by token in ${group}-row windows` : 'rows in order'}: ${x.cpu.toFixed(1)} µs CPU per row (system ${x.sys.toFixed(1)}), largest WAL ${x.maxWal.toFixed(0)} MB, ${x.wall.toFixed(1)} µs wall per row`,
      );
    }
  }
}
