// The console's log page on a large `logs` table (PostgreSQL): ~200k rows seeded with generate_series, ANALYZEd, then
// the page's statements (the total, the rows, the stat) for the usual filters are EXPLAINed and run. Each plan must
// reach `logs` through an index (no Seq Scan on it) and each statement answer within a second. The million-row
// figures are bench/log-million.mjs's.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql, type Compilable, type Kysely } from 'kysely';
import { describeEachDb, createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
import { logPageQueries, logStatQueries, type LogFilter } from '../../src/services/log-query.js';
import { seedLogsSql } from '../../../bench/log-seed.mjs';

const ROWS = 200_000;
const NOW = 1_900_000_000;
const DAY = 86_400;
const startOfDay = NOW - (NOW % DAY);

/** the console's filters: its defaults (today, up to an hour ahead) alone, per user, per model, and a past week */
export const PAGE_FILTERS: Record<string, LogFilter> = {
  'admin, all logs, page 1': { startTimestamp: startOfDay, endTimestamp: NOW + 3600 },
  'one user': { userId: 42, startTimestamp: startOfDay, endTimestamp: NOW + 3600 },
  'one user, consume only, all time': { userId: 42, type: 2 },
  'one model, last week': { modelName: 'gpt-4o-mini', startTimestamp: NOW - 7 * DAY, endTimestamp: NOW },
  'one token, last week': { tokenName: 'tok42-1', startTimestamp: NOW - 7 * DAY, endTimestamp: NOW },
  'time range, a week a month ago': { startTimestamp: NOW - 37 * DAY, endTimestamp: NOW - 30 * DAY },
};

await describeEachDb(
  'log page plans on a large table',
  () => {
    let database: TestDatabase;
    let db: Kysely<Database>;
    let close: () => Promise<void>;

    const plan = async (q: Compilable) => {
      const c = q.compile();
      const res = await db.executeQuery<{ 'QUERY PLAN': string }>({ ...c, sql: `EXPLAIN ${c.sql}` });
      return res.rows.map((r) => r['QUERY PLAN']).join('\n');
    };

    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      const opened = await openDatabase({ dsn: database.dsn, sqlitePath: '', poolSize: 2 });
      db = opened.db;
      close = () => opened.close();
      await migrateToLatest(db, opened.kind);
      await sql.raw(seedLogsSql({ rows: ROWS, now: NOW })).execute(db);
      await sql`VACUUM ANALYZE logs`.execute(db);
    }, 120_000);
    afterAll(async () => {
      await close?.();
      await database?.drop();
    });

    for (const [name, filter] of Object.entries(PAGE_FILTERS)) {
      it(`${name}: every statement reaches logs through an index and answers within a second`, async () => {
        const page = logPageQueries(db, filter, 1, 10);
        const stat = logStatQueries(db, filter, NOW);
        for (const q of [page.count, page.rows, stat.quota, stat.lastMinute]) {
          const p = await plan(q);
          if (process.env.PRINT_PLANS) console.log(`-- ${name}\n${q.compile().sql}\n${p}`);
          expect(p, p).not.toMatch(/Seq Scan on logs/);
          const started = performance.now();
          await q.execute();
          expect(performance.now() - started).toBeLessThan(1000);
        }
      });
    }
  },
  ['sqlite', 'mysql'],
);
