// The tasks table as new-api's task engine needs it: `group`, `private_data`, and a task_id of up to 191
// characters, also on a database whose tasks table an earlier version created with task_id varchar(50).
import { expect, it } from 'vitest';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, describeEachDb } from '../helpers/databases.js';

const LONG_ID = `task_${'a'.repeat(186)}`; // 191 characters

await describeEachDb('tasks columns', (kind) => {
  it('widens an earlier task_id varchar(50) to 191, adds group and private_data, and runs again', async () => {
    const tdb = await createTestDatabase(kind);
    const { db, close } = await openDatabase({ dsn: tdb.dsn, sqlitePath: tdb.sqlitePath });
    try {
      const idType =
        kind === 'postgres'
          ? 'bigserial PRIMARY KEY'
          : kind === 'mysql'
            ? 'bigint AUTO_INCREMENT PRIMARY KEY'
            : 'integer PRIMARY KEY AUTOINCREMENT';
      await sql
        .raw(
          `CREATE TABLE tasks (id ${idType}, task_id varchar(50) NOT NULL DEFAULT '', user_id bigint NOT NULL DEFAULT 0)`,
        )
        .execute(db);
      await migrateToLatest(db, kind);
      expect(await migrateToLatest(db, kind)).toEqual([]);
      await db
        .insertInto('tasks')
        .values({ task_id: LONG_ID, user_id: 7, group: 'vip', private_data: '{"upstream_task_id":"u-1"}' })
        .execute();
      const row = await db
        .selectFrom('tasks')
        .select(['task_id', 'group', 'private_data', 'status', 'quota'])
        .where('user_id', '=', 7)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({
        task_id: LONG_ID,
        group: 'vip',
        private_data: '{"upstream_task_id":"u-1"}',
        status: '',
        quota: 0,
      });
    } finally {
      await close();
      await tdb.drop();
    }
  });
});
