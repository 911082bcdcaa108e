// midjourneys.video_url and video_urls (new-api's VIDEO action), added by 0016 to a midjourneys table an earlier
// version created without them; the migration runs once.
import { expect, it } from 'vitest';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, describeEachDb } from '../helpers/databases.js';

await describeEachDb('midjourneys video columns', (kind) => {
  it('adds video_url and video_urls to an earlier midjourneys table, keeps its rows, and runs again', async () => {
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
          `CREATE TABLE midjourneys (id ${idType}, user_id bigint NOT NULL DEFAULT 0, mj_id varchar(191) NOT NULL DEFAULT '')`,
        )
        .execute(db);
      await sql.raw(`INSERT INTO midjourneys (user_id, mj_id) VALUES (3, 'old-1')`).execute(db);
      const applied = await migrateToLatest(db, kind);
      expect(applied).toContain('0016_midjourney_video');
      expect(await migrateToLatest(db, kind)).toEqual([]);
      await db
        .insertInto('midjourneys')
        .values({ user_id: 4, mj_id: 'new-1', video_url: 'https://v/1.mp4', video_urls: '[{"url":"https://v/1.mp4"}]' })
        .execute();
      const rows = await db
        .selectFrom('midjourneys')
        .select(['mj_id', 'video_url', 'video_urls'])
        .orderBy('id')
        .execute();
      expect(rows).toEqual([
        { mj_id: 'old-1', video_url: '', video_urls: '' },
        { mj_id: 'new-1', video_url: 'https://v/1.mp4', video_urls: '[{"url":"https://v/1.mp4"}]' },
      ]);
    } finally {
      await close();
      await tdb.drop();
    }
  });
});
