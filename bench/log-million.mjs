// The console's log page on a million log rows (PostgreSQL): seeds a fresh database with one INSERT … SELECT
// generate_series (bench/log-seed.mjs), ANALYZEs it, then prints, for the page's usual filters, the EXPLAIN ANALYZE of
// each of its statements (the total, the page's rows, the stat's sum and last minute) and the median of 5 timed runs.
// The statements are the server's own (services/log-query.ts logPageQueries / logStatQueries, from server/dist: run
// `npm run build -w server` first). The database is dropped at the end.
//
// Env: LOG_ROWS (1000000), BENCH_PG_URL (postgres://root@127.0.0.1:5432/test: a server where this user may create a
// database), LOG_PLANS=0 to print only the timings.
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { seedLogsSql } from './log-seed.mjs';

const env = process.env;
const ROWS = Number(env.LOG_ROWS ?? 1_000_000);
const ADMIN_URL = env.BENCH_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';
const PRINT_PLANS = env.LOG_PLANS !== '0';
const NOW = Math.floor(Date.now() / 1000);
const DAY = 86_400;
const startOfDay = NOW - (NOW % DAY);

const server = new URL('../server/dist/', import.meta.url);
const { openDatabase } = await import(new URL('db/connect.js', server).href);
const { migrateToLatest } = await import(new URL('db/migrate.js', server).href);
const { logPageQueries, logStatQueries } = await import(new URL('services/log-query.js', server).href);

/** the console's filters: its default (today, to an hour ahead), per user, per model, per token, a past week */
const FILTERS = {
  'admin, all logs, page 1 (default: today)': { startTimestamp: startOfDay, endTimestamp: NOW + 3600 },
  'admin, all logs, no time filter': {},
  'one user (today)': { userId: 42, startTimestamp: startOfDay, endTimestamp: NOW + 3600 },
  'one user, all time': { userId: 42 },
  'one model, last week': { modelName: 'gpt-4o-mini', startTimestamp: NOW - 7 * DAY, endTimestamp: NOW },
  'one token, last week': { tokenName: 'tok42-1', startTimestamp: NOW - 7 * DAY, endTimestamp: NOW },
  'time range, a week a month ago': { startTimestamp: NOW - 37 * DAY, endTimestamp: NOW - 30 * DAY },
};

const name = `bench_logs_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;
const opened = await openDatabase({ dsn: url.toString(), sqlitePath: '', poolSize: 2 });
const db = opened.db;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  await migrateToLatest(db, opened.kind);
  let t = performance.now();
  await db.executeQuery({ sql: seedLogsSql({ rows: ROWS, now: NOW }), parameters: [], query: { kind: 'RawNode' } });
  console.log(`seeded ${ROWS.toLocaleString('en')} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  t = performance.now();
  await db.executeQuery({ sql: 'VACUUM ANALYZE logs', parameters: [], query: { kind: 'RawNode' } });
  console.log(`VACUUM ANALYZE in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);

  const summary = [];
  for (const [label, filter] of Object.entries(FILTERS)) {
    const page = logPageQueries(db, filter, 1, 10);
    const stat = logStatQueries(db, filter, NOW);
    for (const [what, q] of Object.entries({
      total: page.count,
      rows: page.rows,
      'stat sum': stat.quota,
      'stat last minute': stat.lastMinute,
    })) {
      const c = q.compile();
      const plan = await db.executeQuery({ ...c, sql: `EXPLAIN (ANALYZE, BUFFERS) ${c.sql}` });
      const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      const times = [];
      for (let i = 0; i < 5; i++) {
        const s = performance.now();
        await q.execute();
        times.push(performance.now() - s);
      }
      const ms = median(times);
      const seq = /Seq Scan on logs/.test(text);
      summary.push({ filter: label, statement: what, 'median ms': Number(ms.toFixed(1)), 'seq scan': seq });
      if (PRINT_PLANS) console.log(`-- ${label} / ${what}: ${ms.toFixed(1)} ms\n${c.sql}\n${text}\n`);
    }
  }
  console.table(summary);
} finally {
  await opened.close();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
