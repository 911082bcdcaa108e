// Versioned migrations, one set for all three databases, recorded in kysely_migration. Run at start on the
// master node only (new-api-compat.md §1.1); each step is idempotent so a half-applied run can simply be repeated.
import { Migrator, type Migration, type MigrationProvider, type Kysely } from 'kysely';
import type { DbKind } from '../config.js';
import { adoptIdentityClaims } from './identity-claims.js';
import { migratePasskeyTables } from './passkey-migration.js';
import {
  adoptNewApiColumnNames,
  ensureTables,
  rebuildWithoutRowid,
  widenQuotaColumns,
  widenTaskIdColumn,
} from './tables.js';

/** new-api's ChannelInfo of a single-key channel (services/multi-key.ts SINGLE_KEY_INFO_JSON, which a test compares) */
export const SINGLE_KEY_CHANNEL_INFO =
  '{"is_multi_key":false,"multi_key_size":0,"multi_key_status_list":null,"multi_key_polling_index":0,"multi_key_mode":""}';

/** Every migration's name, in the order they run. */
export function migrationNames(kind: DbKind): string[] {
  return Object.keys(migrations(kind)).sort();
}

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
    // users.discord_id (and oauth_states, since replaced by short_lived_entries)
    '0008_oauth_states': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // two_fas and two_fa_backup_codes (new-api's two-factor tables)
    '0009_two_factor': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // passkey_credentials (several per user)
    '0010_passkeys': { up: (db: Kysely<any>) => migratePasskeyTables(db, kind) },
    // custom_oauth_providers and user_oauth_bindings (operator-defined OAuth logins, new-api's tables)
    '0011_custom_oauth': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // identity_claims (one holder per third-party account, filled from the users' provider columns) and
    // unseen_passwords (services/oauth/claims.ts, unbind.ts)
    '0012_identity_claims': { up: (db: Kysely<any>) => adoptIdentityClaims(db, kind) },
    // short_lived_entries (OAuth states and verification codes every node sees when there is no Redis)
    '0013_short_lived_entries': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // logs (user_id, created_at) and (model_name, created_at): the console's filtered log pages on a large table
    '0014_log_indexes': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // usage_limits (per-key and per-user rate limits and budgets, services/limits/)
    '0014_usage_limits': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // tasks.group and tasks.private_data, tasks.task_id widened to 191 (new-api's task engine: Suno and others)
    '0015_task_columns': {
      up: async (db: Kysely<any>) => {
        await ensureTables(db, kind);
        await widenTaskIdColumn(db, kind);
      },
    },
    // midjourneys.video_url and video_urls (new-api's VIDEO action)
    '0016_midjourney_video': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // channels.channel_info (new-api's multi-key state, services/multi-key.ts), filled for the rows already there:
    // new-api cannot read a channel whose channel_info is NULL
    '0017_channel_info': {
      up: async (db: Kysely<any>) => {
        await ensureTables(db, kind);
        await db
          .updateTable('channels')
          .set({ channel_info: SINGLE_KEY_CHANNEL_INFO })
          .where('channel_info', 'is', null)
          .execute();
      },
    },
    // midjourneys.private_data (the paying token of a drawing charged without a consume log row, services/tasks/mj-apply.ts)
    '0018_midjourney_private_data': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // checkins (new-api's daily check-in, services/checkin.ts)
    '0019_checkins': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // top_ups.payment_method (new-api's later column: the order's method, shown in the top-up history)
    '0020_topup_payment_method': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // new-api's subscription_plans, subscription_orders, user_subscriptions and subscription_pre_consume_records, and
    // ours beside them: subscription_plan_limits, subscription_usage, subscription_holds (docs/decisions/0015)
    '0021_subscriptions': { up: (db: Kysely<any>) => ensureTables(db, kind) },
    // subscription_usage.rolling_seconds: the rolling window's length kept as bought (a plan edit changes no bought
    // subscription's windows)
    '0022_subscription_rolling_snapshot': { up: (db: Kysely<any>) => ensureTables(db, kind) },
  };
}

export async function migrateToLatest(db: Kysely<any>, kind: DbKind): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(kind) };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
