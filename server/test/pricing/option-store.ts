// A real OptionStore over a fresh, migrated SQLite database, so option overrides go through the same
// set() → JSON parse path as in production.
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { OptionStore } from '../../src/services/options.js';
import { createTestDatabase } from '../helpers/databases.js';

export interface TestOptions {
  options: OptionStore;
  close(): Promise<void>;
}

export async function sqliteOptions(): Promise<TestOptions> {
  const tdb = await createTestDatabase('sqlite');
  const { db, kind, close } = await openDatabase({ dsn: tdb.dsn, sqlitePath: tdb.sqlitePath });
  await migrateToLatest(db, kind);
  const options = new OptionStore(db, kind);
  await options.load();
  return {
    options,
    close: async () => {
      await close();
      await tdb.drop();
    },
  };
}
