// Migration 0010 (passkeys): creates passkey_credentials and lets a user hold several
// passkeys in a database where new-api created the table with a unique index on user_id (new-api-compat.md §9.8).
import { sql, type Kysely } from 'kysely';
import type { DbKind } from '../config.js';
import { ensureTables } from './tables.js';

const TABLE = 'passkey_credentials';

/** Names of the unique indexes on exactly (user_id) of passkey_credentials. */
async function uniqueUserIdIndexes(db: Kysely<any>, kind: DbKind): Promise<string[]> {
  if (kind === 'sqlite') {
    const list = await sql<{ name: string; unique: number; origin: string }>`
      SELECT name, "unique", origin FROM pragma_index_list(${TABLE})`.execute(db);
    const names: string[] = [];
    for (const idx of list.rows) {
      if (!Number(idx.unique) || idx.origin === 'pk') continue;
      const cols = await sql<{ name: string }>`SELECT name FROM pragma_index_info(${idx.name})`.execute(db);
      if (cols.rows.length === 1 && cols.rows[0].name === 'user_id') names.push(idx.name);
    }
    return names;
  }
  if (kind === 'postgres') {
    const rows = await sql<{ indexname: string; indexdef: string }>`
      SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ${TABLE}`.execute(
      db,
    );
    return rows.rows.filter((r) => /^CREATE UNIQUE INDEX .*\(user_id\)$/i.test(r.indexdef)).map((r) => r.indexname);
  }
  const rows = await sql<{ index_name: string; n: number; non_unique: number; col: string }>`
    SELECT index_name, COUNT(*) AS n, MAX(non_unique) AS non_unique, MAX(column_name) AS col
    FROM information_schema.statistics
    WHERE table_schema = DATABASE() AND table_name = ${TABLE} AND index_name <> 'PRIMARY'
    GROUP BY index_name`.execute(db);
  return rows.rows
    .filter((r) => Number(r.n) === 1 && Number(r.non_unique) === 0 && r.col === 'user_id')
    .map((r) => r.index_name);
}

export async function migratePasskeyTables(db: Kysely<any>, kind: DbKind): Promise<void> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: false });
  if (tables.some((t) => t.name === TABLE)) {
    for (const name of await uniqueUserIdIndexes(db, kind)) {
      const ident = kind === 'mysql' ? `\`${name}\`` : `"${name}"`;
      await sql.raw(kind === 'mysql' ? `DROP INDEX ${ident} ON \`${TABLE}\`` : `DROP INDEX ${ident}`).execute(db);
    }
  }
  // recreates idx_passkey_credentials_user_id without the uniqueness, and adds what else is missing
  await ensureTables(db, kind);
}
