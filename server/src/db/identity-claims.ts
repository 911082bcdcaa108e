// The third-party account columns of `users` by binding type (new-api's names, as its admin route
// DELETE /api/user/:id/bindings/:binding_type takes them), and migration 0012's backfill of `identity_claims` from
// those columns, so that accounts bound before the migration (here or by new-api) are claimed like new ones.
import { sql, type Kysely } from 'kysely';
import type { DbKind } from '../config.js';
import { ensureTables } from './tables.js';

export const PROVIDER_COLUMNS = {
  github: 'github_id',
  linuxdo: 'linux_do_id',
  discord: 'discord_id',
  oidc: 'oidc_id',
  wechat: 'wechat_id',
  telegram: 'telegram_id',
} as const;

export type ClaimProvider = keyof typeof PROVIDER_COLUMNS;
export type ProviderColumnName = (typeof PROVIDER_COLUMNS)[ClaimProvider];

/**
 * Creates the tables, then claims every bound account for the lowest user id holding it (soft-deleted users keep
 * their bindings, as new-api). An account a past race bound twice stays readable on both rows; only the first can
 * log in through it from now on, as before. Idempotent: rows already there are left alone.
 */
export async function adoptIdentityClaims(db: Kysely<any>, kind: DbKind): Promise<void> {
  await ensureTables(db, kind);
  const insert = kind === 'mysql' ? 'INSERT IGNORE INTO' : kind === 'sqlite' ? 'INSERT OR IGNORE INTO' : 'INSERT INTO';
  const tail = kind === 'postgres' ? ' ON CONFLICT DO NOTHING' : '';
  for (const [provider, column] of Object.entries(PROVIDER_COLUMNS)) {
    await sql`${sql.raw(insert)} identity_claims (provider, external_id, user_id, claimed_at)
      SELECT ${provider}, ${sql.ref(column)}, MIN(id), 0 FROM users WHERE ${sql.ref(column)} <> ''
      GROUP BY ${sql.ref(column)}${sql.raw(tail)}`.execute(db);
  }
}
