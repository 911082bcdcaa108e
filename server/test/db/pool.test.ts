// new-api's pool variables reach the PostgreSQL / MySQL pools: SQL_MAX_OPEN_CONNS caps the connections a burst of
// queries opens, SQL_MAX_LIFETIME (PostgreSQL) replaces a connection once it is that old.
import { afterEach, expect, it } from 'vitest';
import { CompiledQuery } from 'kysely';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

await describeEachDb(
  'connection pool',
  (kind) => {
    let s: TestServer | undefined;
    afterEach(async () => {
      await s?.close();
      s = undefined;
    });

    const q = async <R>(text: string) => (await s!.ctx.db.executeQuery<R>(CompiledQuery.raw(text))).rows;

    it('opens no more than SQL_MAX_OPEN_CONNS connections under a burst', async () => {
      s = await startTestServer({ kind, env: { SQL_MAX_OPEN_CONNS: '3' } });
      const sleep = kind === 'postgres' ? 'SELECT pg_sleep(0.05)' : 'SELECT SLEEP(0.05)';
      const started = Date.now();
      await Promise.all(Array.from({ length: 12 }, () => q(sleep)));
      // 12 sleeps of 50 ms over 3 connections: four rounds, not one
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      const open =
        kind === 'postgres'
          ? await q<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()')
          : await q<{ n: number }>('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE()');
      expect(Number(open[0].n)).toBe(3);
    });

    // PostgreSQL only: it tells connections apart by pg_backend_pid(), which only PostgreSQL has
    it.runIf(kind === 'postgres')('replaces a PostgreSQL connection older than SQL_MAX_LIFETIME', async () => {
      s = await startTestServer({ kind, env: { SQL_MAX_OPEN_CONNS: '1', SQL_MAX_LIFETIME: '1' } });
      const pid = async () => Number((await q<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0].pid);
      const first = await pid();
      expect(await pid()).toBe(first);
      await new Promise((r) => setTimeout(r, 1300));
      expect(await pid()).not.toBe(first);
    });
  },
  ['sqlite'],
);
