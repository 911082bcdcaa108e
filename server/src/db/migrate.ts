// Versioned migrations, one set for all three databases, recorded in kysely_migration. Run at start on the
// master node only (new-api-compat.md §1.1); each step is idempotent so a half-applied run can simply be repeated.
import { Migrator, type Migration, type MigrationProvider, type Kysely } from 'kysely';
import type { DbKind } from '../config.js';
import { migratePasskeyTables } from './passkey-migration.js';
import { adoptNewApiColumnNames, ensureTables, rebuildWithoutRowid, widenQuotaColumns } from './tables.js';

function migrations(kind: DbKind): Record<string, Migration> {
  return {
    '0001_new_api_schema': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    '0002_quota_columns_64bit': { up: (db: Kysely<any>) => widenQuotaColumns(db, kind) },
    // quota_holds and quota_hold_nodes (crash recovery of reservations); ensureTables only adds what is missing
    '0003_quota_holds': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // quota_hold_journal (SQLite's record of the same holds, one row per commit)
    '0004_quota_hold_journal': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // SQLite: the journal without a rowid table beside its primary key (one page less per reservation commit)
    '0005_hold_journal_without_rowid': { up: (db: Kysely<any>) => rebuildWithoutRowid(db, kind) },
    // sessions (console logins that logout, password changes, bans and role changes can end)
    '0006_sessions': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // new-api's own column names where an earlier version of ours had invented one (channels.open_ai_organization);
    // the values stored under our name are copied over
    '0007_new_api_column_names': { up: (db: Kysely<any>) => adoptNewApiColumnNames(db, kind) },
    // oauth_states (OAuth login states every node sees when there is no Redis) and users.discord_id
    '0008_oauth_states': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // passkey_credentials (several per user) and passkey_challenges
    '0010_passkeys': { up: (db: Kysely<any>) => migratePasskeyTables(db, kind) },
  };
}

export async function migrateToLatest(db: Kysely<any>, kind: DbKind): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(kind) };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
