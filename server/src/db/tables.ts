// One declarative description of every table (new-api-compat.md §2), turned into DDL for SQLite, PostgreSQL and MySQL.
// Quota-like columns are 64-bit everywhere (new-api's 32-bit INT caps balances near $4,295).
import { sql, type Kysely } from 'kysely';
import type { DbKind } from '../config.js';
import {
  c,
  id,
  ix,
  softDelete,
  ux,
  type ColType,
  type ColumnSpec,
  type IndexSpec,
  type TableSpec,
} from './table-spec.js';
import { SIGN_IN_TABLES } from './tables-sign-in.js';
import { SUBSCRIPTION_TABLES } from './tables-subscriptions.js';

export type { ColumnSpec, IndexSpec, TableSpec } from './table-spec.js';

export const TABLES: TableSpec[] = [
  {
    name: 'channels',
    columns: [
      id,
      c('type', 'bigint', 0),
      c('key', 'text', undefined, true),
      // gorm's name for new-api's Go field OpenAIOrganization; earlier versions of ours used a column of their own,
      // openai_organization, whose values migration 0007 copies here
      c('open_ai_organization', 'text'),
      c('test_model', 'text'),
      c('status', 'bigint', 1),
      c('name', 'varchar(191)', ''),
      c('weight', 'bigint', 0, false),
      c('created_time', 'bigint', 0),
      c('test_time', 'bigint', 0),
      c('response_time', 'bigint', 0),
      c('base_url', 'text', '', false),
      c('other', 'text', ''),
      c('balance', 'float', 0),
      c('balance_updated_time', 'bigint', 0),
      c('models', 'text', ''),
      c('group', 'varchar(64)', 'default'),
      c('used_quota', 'bigint', 0),
      c('model_mapping', 'text'),
      c('status_code_mapping', 'varchar(1024)', ''),
      c('priority', 'bigint', 0, false),
      c('auto_ban', 'bigint', 1, false),
      c('other_info', 'text', ''),
      c('tag', 'varchar(191)'),
      c('setting', 'text'),
      c('param_override', 'text'),
      c('max_input_tokens', 'bigint', 0),
      // new-api's multi-key state (gorm type:json; services/multi-key.ts); no default (MySQL refuses one on json),
      // migration 0017 fills the rows that predate it
      c('channel_info', 'json'),
    ],
    indexes: [ix('channels', 'name'), ix('channels', 'tag')],
  },
  {
    name: 'tokens',
    columns: [
      id,
      c('user_id', 'bigint', 0),
      c('key', 'char(48)', undefined, true),
      c('status', 'bigint', 1),
      c('name', 'varchar(191)', ''),
      c('created_time', 'bigint', 0),
      c('accessed_time', 'bigint', 0),
      c('expired_time', 'bigint', -1),
      c('remain_quota', 'bigint', 0),
      c('unlimited_quota', 'bool', false),
      c('model_limits_enabled', 'bool', false),
      c('model_limits', 'text', ''),
      c('allow_ips', 'text', ''),
      c('used_quota', 'bigint', 0),
      c('group', 'varchar(64)', ''),
      softDelete,
    ],
    indexes: [ix('tokens', 'user_id'), ux('tokens', 'key'), ix('tokens', 'name'), ix('tokens', 'deleted_at')],
  },
  {
    name: 'users',
    columns: [
      id,
      c('username', 'varchar(191)', undefined, true),
      c('password', 'text', undefined, true),
      c('display_name', 'varchar(191)', ''),
      c('role', 'bigint', 1),
      c('status', 'bigint', 1),
      c('email', 'varchar(191)', ''),
      c('github_id', 'varchar(191)', ''),
      c('oidc_id', 'varchar(191)', ''),
      c('wechat_id', 'varchar(191)', ''),
      c('telegram_id', 'varchar(191)', ''),
      c('linux_do_id', 'varchar(191)', ''),
      // new-api's later column for Discord logins (migration 0008)
      c('discord_id', 'varchar(191)', ''),
      c('access_token', 'char(32)'),
      c('quota', 'bigint', 0),
      c('used_quota', 'bigint', 0),
      c('request_count', 'bigint', 0),
      c('group', 'varchar(64)', 'default'),
      c('aff_code', 'varchar(32)'),
      c('aff_count', 'bigint', 0),
      c('aff_quota', 'bigint', 0),
      c('aff_history', 'bigint', 0),
      c('inviter_id', 'bigint', 0),
      softDelete,
      c('setting', 'text', ''),
    ],
    indexes: [
      ux('users', 'username'),
      ix('users', 'display_name'),
      ix('users', 'email'),
      ix('users', 'github_id'),
      ix('users', 'oidc_id'),
      ix('users', 'wechat_id'),
      ix('users', 'telegram_id'),
      ix('users', 'linux_do_id'),
      ix('users', 'discord_id'),
      ux('users', 'access_token'),
      ux('users', 'aff_code'),
      ix('users', 'inviter_id'),
      ix('users', 'deleted_at'),
    ],
  },
  {
    name: 'options',
    columns: [c('key', 'varchar(191)', undefined, true), c('value', 'text')],
    primaryKey: ['key'],
    indexes: [],
  },
  {
    name: 'redemptions',
    columns: [
      id,
      c('user_id', 'bigint', 0),
      c('key', 'char(32)', undefined, true),
      c('status', 'bigint', 1),
      c('name', 'varchar(191)', ''),
      c('quota', 'bigint', 100),
      c('created_time', 'bigint', 0),
      c('redeemed_time', 'bigint', 0),
      c('used_user_id', 'bigint', 0),
      softDelete,
    ],
    indexes: [ux('redemptions', 'key'), ix('redemptions', 'name'), ix('redemptions', 'deleted_at')],
  },
  {
    name: 'abilities',
    columns: [
      c('group', 'varchar(64)', undefined, true),
      c('model', 'varchar(255)', undefined, true),
      c('channel_id', 'bigint', undefined, true),
      c('enabled', 'bool', true),
      c('priority', 'bigint', 0, false),
      c('weight', 'bigint', 0),
      c('tag', 'varchar(191)'),
    ],
    primaryKey: ['group', 'model', 'channel_id'],
    indexes: [
      ix('abilities', 'channel_id'),
      ix('abilities', 'priority'),
      ix('abilities', 'weight'),
      ix('abilities', 'tag'),
    ],
  },
  {
    name: 'logs',
    columns: [
      id,
      c('user_id', 'bigint', 0),
      c('created_at', 'bigint', 0),
      c('type', 'bigint', 0),
      c('content', 'text', ''),
      c('username', 'varchar(191)', ''),
      c('token_name', 'varchar(191)', ''),
      c('model_name', 'varchar(191)', ''),
      c('quota', 'bigint', 0),
      c('prompt_tokens', 'bigint', 0),
      c('completion_tokens', 'bigint', 0),
      c('use_time', 'bigint', 0),
      c('is_stream', 'bool', false),
      c('channel_id', 'bigint', 0),
      c('token_id', 'bigint', 0),
      c('group', 'varchar(64)', ''),
      c('other', 'text', ''),
    ],
    indexes: [
      ix('logs', 'user_id'),
      { name: 'idx_created_at_id', columns: ['id', 'created_at'] },
      { name: 'idx_created_at_type', columns: ['created_at', 'type'] },
      ix('logs', 'username'),
      { name: 'index_username_model_name', columns: ['model_name', 'username'] },
      ix('logs', 'token_name'),
      ix('logs', 'model_name'),
      ix('logs', 'channel_id'),
      ix('logs', 'token_id'),
      ix('logs', 'group'),
      // the console's per-user and per-model pages with their time range (migration 0014, bench/log-million.mjs)
      ix('logs', 'user_id', 'created_at'),
      ix('logs', 'model_name', 'created_at'),
    ],
  },
  {
    name: 'midjourneys',
    columns: [
      id,
      c('code', 'bigint', 0),
      c('user_id', 'bigint', 0),
      c('action', 'varchar(40)', ''),
      c('mj_id', 'varchar(191)', ''),
      c('prompt', 'text', ''),
      c('prompt_en', 'text', ''),
      c('description', 'text', ''),
      c('state', 'text', ''),
      c('submit_time', 'bigint', 0),
      c('start_time', 'bigint', 0),
      c('finish_time', 'bigint', 0),
      c('image_url', 'text', ''),
      // new-api's video actions (VIDEO): the first video and the JSON list of all of them
      c('video_url', 'text', ''),
      c('video_urls', 'text', ''),
      c('status', 'varchar(20)', ''),
      c('progress', 'varchar(30)', ''),
      c('fail_reason', 'text', ''),
      c('channel_id', 'bigint', 0),
      c('quota', 'bigint', 0),
      c('buttons', 'text', ''),
      c('properties', 'text', ''),
      // ours, never returned by any API: who paid for a drawing whose charge has no consume log row (logs off)
      c('private_data', 'text', ''),
    ],
    indexes: [
      ix('midjourneys', 'user_id'),
      ix('midjourneys', 'action'),
      ix('midjourneys', 'mj_id'),
      ix('midjourneys', 'submit_time'),
      ix('midjourneys', 'start_time'),
      ix('midjourneys', 'finish_time'),
      ix('midjourneys', 'status'),
      ix('midjourneys', 'progress'),
    ],
  },
  {
    name: 'top_ups',
    columns: [
      id,
      c('user_id', 'bigint', 0),
      c('amount', 'bigint', 0),
      c('money', 'float', 0),
      c('trade_no', 'varchar(191)', ''),
      // new-api's later column: alipay / wxpay (EPay), stripe, creem
      c('payment_method', 'varchar(50)', ''),
      c('create_time', 'bigint', 0),
      c('status', 'varchar(32)', ''),
    ],
    indexes: [ix('top_ups', 'user_id'), ix('top_ups', 'trade_no')],
  },
  {
    name: 'quota_data',
    columns: [
      id,
      c('user_id', 'bigint', 0),
      c('username', 'varchar(64)', ''),
      c('model_name', 'varchar(64)', ''),
      c('created_at', 'bigint', 0),
      c('token_used', 'bigint', 0),
      c('count', 'bigint', 0),
      c('quota', 'bigint', 0),
    ],
    indexes: [
      ix('quota_data', 'user_id'),
      { name: 'idx_qdt_model_user_name', columns: ['model_name', 'username'] },
      { name: 'idx_qdt_created_at', columns: ['created_at'] },
    ],
  },
  {
    name: 'tasks',
    columns: [
      id,
      c('created_at', 'bigint', 0),
      c('updated_at', 'bigint', 0),
      c('task_id', 'varchar(191)', ''),
      c('platform', 'varchar(30)', ''),
      c('user_id', 'bigint', 0),
      c('group', 'varchar(50)', ''),
      c('channel_id', 'bigint', 0),
      c('quota', 'bigint', 0),
      c('action', 'varchar(40)', ''),
      c('status', 'varchar(20)', ''),
      c('fail_reason', 'text', ''),
      c('submit_time', 'bigint', 0),
      c('start_time', 'bigint', 0),
      c('finish_time', 'bigint', 0),
      c('progress', 'varchar(20)', ''),
      c('properties', 'text', ''),
      // never returned by any API: the upstream's own task id, the result URL and the billing context
      c('private_data', 'text', ''),
      c('data', 'text', ''),
    ],
    indexes: [
      ix('tasks', 'created_at'),
      ix('tasks', 'task_id'),
      ix('tasks', 'platform'),
      ix('tasks', 'user_id'),
      ix('tasks', 'channel_id'),
      ix('tasks', 'action'),
      ix('tasks', 'status'),
      ix('tasks', 'submit_time'),
      ix('tasks', 'start_time'),
      ix('tasks', 'finish_time'),
      ix('tasks', 'progress'),
    ],
  },
  // Ours, not new-api's (it ignores unknown tables): the quota each gateway process holds in reservations it has not
  // settled yet, so that a process that dies mid-request gives it back (services/quota-holds.ts).
  {
    name: 'quota_holds',
    columns: [
      c('node', 'varchar(64)', undefined, true),
      c('user_id', 'bigint', undefined, true),
      c('token_id', 'bigint', undefined, true),
      c('user_quota', 'bigint', 0),
      c('token_quota', 'bigint', 0),
    ],
    primaryKey: ['node', 'user_id', 'token_id'],
    indexes: [],
  },
  // SQLite records holds as one row per commit instead of one per pair (services/quota-holds.ts)
  {
    name: 'quota_hold_journal',
    columns: [
      c('node', 'varchar(64)', undefined, true),
      c('seq', 'bigint', undefined, true),
      c('holds', 'text', undefined, true),
    ],
    primaryKey: ['node', 'seq'],
    indexes: [],
    // one B-tree instead of a rowid table plus its primary-key index: a reservation's group commit writes one page
    // less (migration 0005)
    withoutRowid: true,
  },
  {
    name: 'quota_hold_nodes',
    columns: [c('node', 'varchar(64)', undefined, true), c('seen_at', 'bigint', 0)],
    primaryKey: ['node'],
    indexes: [],
  },
  ...SIGN_IN_TABLES,
  // Ours: per-key and per-user governance settings (services/limits/, migration 0014), one JSON object per row;
  // new-api's tokens table has no settings column, so they live here rather than in a column new-api does not know
  {
    name: 'usage_limits',
    columns: [
      c('scope', 'varchar(8)', undefined, true),
      c('target_id', 'bigint', 0),
      c('limits', 'text', undefined, true),
    ],
    primaryKey: ['scope', 'target_id'],
    indexes: [],
  },
  {
    name: 'setups',
    columns: [id, c('version', 'varchar(50)', undefined, true), c('initialized_at', 'bigint', undefined, true)],
    indexes: [],
  },
  {
    // new-api's daily check-ins (services/checkin.ts): one row per user and day of the site's calendar
    name: 'checkins',
    columns: [
      id,
      c('user_id', 'bigint', undefined, true),
      c('checkin_date', 'varchar(10)', undefined, true),
      c('quota_awarded', 'bigint', undefined, true),
      c('created_at', 'bigint', 0),
    ],
    // new-api's name; the unique pair is what makes a second check-in of the day fail on every instance
    indexes: [{ name: 'idx_user_checkin_date', columns: ['user_id', 'checkin_date'], unique: true }],
  },
  ...SUBSCRIPTION_TABLES,
];

function q(kind: DbKind, ident: string): string {
  return kind === 'mysql' ? `\`${ident}\`` : `"${ident}"`;
}

function sqlType(kind: DbKind, type: ColType): string {
  switch (type) {
    case 'id':
      return kind === 'sqlite'
        ? 'integer PRIMARY KEY AUTOINCREMENT'
        : kind === 'postgres'
          ? 'bigserial PRIMARY KEY'
          : 'bigint AUTO_INCREMENT PRIMARY KEY';
    case 'bigint':
      return kind === 'sqlite' ? 'integer' : 'bigint';
    case 'bool':
      return kind === 'sqlite' ? 'numeric' : 'boolean';
    case 'text':
      return kind === 'mysql' ? 'longtext' : 'text';
    case 'json':
      // gorm's type:json: PostgreSQL json, MySQL json (MariaDB: longtext checked as JSON), SQLite a column named json
      return 'json';
    case 'float':
      return kind === 'postgres' ? 'double precision' : kind === 'mysql' ? 'double' : 'real';
    case 'datetime':
      return kind === 'postgres' ? 'timestamptz' : kind === 'mysql' ? 'datetime(3)' : 'datetime';
    default:
      return type;
  }
}

function literal(v: string | number | boolean): string {
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return String(v);
  return `'${v.replace(/'/g, "''")}'`;
}

export function columnDdl(kind: DbKind, col: ColumnSpec): string {
  let s = `${q(kind, col.name)} ${sqlType(kind, col.type)}`;
  if (col.type === 'id') return s;
  if (col.notNull) s += ' NOT NULL';
  if (col.default !== undefined) s += ` DEFAULT ${literal(col.default)}`;
  return s;
}

export function createTableDdl(kind: DbKind, t: TableSpec): string {
  const parts = t.columns.map((col) => columnDdl(kind, col));
  if (t.primaryKey) parts.push(`PRIMARY KEY (${t.primaryKey.map((k) => q(kind, k)).join(', ')})`);
  const tail =
    kind === 'mysql'
      ? ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4'
      : kind === 'sqlite' && t.withoutRowid
        ? ' WITHOUT ROWID'
        : '';
  return `CREATE TABLE IF NOT EXISTS ${q(kind, t.name)} (${parts.join(', ')})${tail}`;
}

/**
 * SQLite: rebuilds the tables declared `withoutRowid` that an earlier version created as rowid tables, keeping their
 * rows (the hold journal of a node that died is still to be recovered).
 */
export async function rebuildWithoutRowid(db: Kysely<any>, kind: DbKind): Promise<void> {
  if (kind !== 'sqlite') return;
  for (const t of TABLES) {
    if (!t.withoutRowid) continue;
    const found = await sql<{
      sql: string;
    }>`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ${t.name}`.execute(db);
    const ddl = found.rows[0]?.sql;
    if (!ddl || /WITHOUT\s+ROWID\s*$/i.test(ddl)) continue;
    const tmp = `${t.name}_rebuilt`;
    const cols = t.columns.map((col) => q(kind, col.name)).join(', ');
    await sql.raw(`DROP TABLE IF EXISTS ${q(kind, tmp)}`).execute(db);
    await sql.raw(createTableDdl(kind, { ...t, name: tmp })).execute(db);
    await sql.raw(`INSERT INTO ${q(kind, tmp)} (${cols}) SELECT ${cols} FROM ${q(kind, t.name)}`).execute(db);
    await sql.raw(`DROP TABLE ${q(kind, t.name)}`).execute(db);
    await sql.raw(`ALTER TABLE ${q(kind, tmp)} RENAME TO ${q(kind, t.name)}`).execute(db);
  }
}

/** Creates missing tables, columns and indexes. Safe to run on a database created by new-api. */
export async function ensureTables(db: Kysely<any>, kind: DbKind): Promise<void> {
  const existing = await db.introspection.getTables({ withInternalKyselyTables: false });
  const byName = new Map(existing.map((t) => [t.name, new Set(t.columns.map((col) => col.name))]));
  for (const t of TABLES) {
    const cols = byName.get(t.name);
    if (!cols) {
      await sql.raw(createTableDdl(kind, t)).execute(db);
    } else {
      for (const col of t.columns) {
        if (cols.has(col.name)) continue;
        await sql.raw(`ALTER TABLE ${q(kind, t.name)} ADD COLUMN ${columnDdl(kind, col)}`).execute(db);
      }
    }
    for (const idx of t.indexes) await ensureIndex(db, kind, t.name, idx);
  }
}

async function ensureIndex(db: Kysely<any>, kind: DbKind, table: string, idx: IndexSpec): Promise<void> {
  const cols = idx.columns.map((col) => q(kind, col)).join(', ');
  const unique = idx.unique ? 'UNIQUE ' : '';
  if (kind === 'mysql') {
    const found = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM information_schema.statistics
      WHERE table_schema = DATABASE() AND table_name = ${table} AND index_name = ${idx.name}`.execute(db);
    if (Number(found.rows[0]?.n ?? 0) > 0) return;
    await sql.raw(`CREATE ${unique}INDEX ${q(kind, idx.name)} ON ${q(kind, table)} (${cols})`).execute(db);
    return;
  }
  await sql.raw(`CREATE ${unique}INDEX IF NOT EXISTS ${q(kind, idx.name)} ON ${q(kind, table)} (${cols})`).execute(db);
}

/** new-api's snapshot declared quota columns as 32-bit INT on MySQL/PostgreSQL; widen them in place. */
export async function widenQuotaColumns(db: Kysely<any>, kind: DbKind): Promise<void> {
  if (kind === 'sqlite') return;
  const wide: Record<string, string[]> = {
    users: [
      'quota',
      'used_quota',
      'request_count',
      'aff_count',
      'aff_quota',
      'aff_history',
      'inviter_id',
      'role',
      'status',
    ],
    tokens: ['remain_quota', 'used_quota'],
    logs: ['quota', 'prompt_tokens', 'completion_tokens'],
    redemptions: ['quota'],
    quota_data: ['quota', 'token_used', 'count'],
  };
  for (const [table, cols] of Object.entries(wide)) {
    const spec = TABLES.find((t) => t.name === table)!;
    for (const name of cols) {
      const col = spec.columns.find((x) => x.name === name)!;
      const stmt =
        kind === 'postgres'
          ? `ALTER TABLE ${q(kind, table)} ALTER COLUMN ${q(kind, name)} TYPE bigint`
          : `ALTER TABLE ${q(kind, table)} MODIFY ${columnDdl(kind, col)}`;
      await sql.raw(stmt).execute(db);
    }
  }
}

/**
 * tasks.task_id holds the public `task_…` id, up to 191 characters as new-api declares it; an earlier schema had 50.
 * SQLite does not enforce a varchar length, so only MySQL and PostgreSQL change.
 */
export async function widenTaskIdColumn(db: Kysely<any>, kind: DbKind): Promise<void> {
  if (kind === 'sqlite') return;
  const col = TABLES.find((t) => t.name === 'tasks')!.columns.find((x) => x.name === 'task_id')!;
  const stmt =
    kind === 'postgres'
      ? `ALTER TABLE ${q(kind, 'tasks')} ALTER COLUMN ${q(kind, 'task_id')} TYPE varchar(191)`
      : `ALTER TABLE ${q(kind, 'tasks')} MODIFY ${columnDdl(kind, col)}`;
  await sql.raw(stmt).execute(db);
}

/**
 * Columns that an earlier version of the gateway added under a name of its own although new-api already had the
 * field under gorm's name (snake case of the Go field name, keeping initialisms such as AI together). new-api's
 * column is the one read and written now; ours stays in place unused, so that nodes still on the earlier version
 * during a rolling upgrade keep working against it.
 */
const RENAMED_COLUMNS: ReadonlyArray<{ table: string; ours: string; newApi: string }> = [
  { table: 'channels', ours: 'openai_organization', newApi: 'open_ai_organization' },
];

/**
 * Adds new-api's column where missing and copies each value we stored under our own name into it, on the rows where
 * new-api's column is still empty (a value new-api wrote is never overwritten). Re-runnable.
 */
export async function adoptNewApiColumnNames(db: Kysely<any>, kind: DbKind): Promise<void> {
  const existing = await db.introspection.getTables({ withInternalKyselyTables: false });
  for (const { table, ours, newApi } of RENAMED_COLUMNS) {
    const found = existing.find((t) => t.name === table);
    if (!found) continue;
    const cols = new Set(found.columns.map((col) => col.name));
    if (!cols.has(newApi)) {
      const spec = TABLES.find((t) => t.name === table)!.columns.find((col) => col.name === newApi)!;
      await sql.raw(`ALTER TABLE ${q(kind, table)} ADD COLUMN ${columnDdl(kind, spec)}`).execute(db);
    }
    if (!cols.has(ours)) continue;
    const [to, from] = [q(kind, newApi), q(kind, ours)];
    await sql
      .raw(
        `UPDATE ${q(kind, table)} SET ${to} = ${from} WHERE (${to} IS NULL OR ${to} = '') AND ${from} IS NOT NULL AND ${from} <> ''`,
      )
      .execute(db);
  }
}
