// Reading the `logs` table (new-api-compat.md §2.7, §3.4, §3.5). Logs may live in their own database (LOG_SQL_DSN), so
// every query here runs on ctx.logDb and channel names are looked up separately in the main database.
import { sql, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { AppContext } from '../context.js';
import type { Database, Log, QuotaDataRecord } from '../db/schema.js';
import { nowSec } from '../lib/time.js';
import { likeExactly, likePrefix } from '../db/like.js';
import type { UsageBucket } from './quota-data.js';

export const LOG_TYPE_UNKNOWN = 0;
export const LOG_TYPE_TOPUP = 1;
export const LOG_TYPE_CONSUME = 2;
export const LOG_TYPE_MANAGE = 3;
export const LOG_TYPE_SYSTEM = 4;

/** Most rows returned by a log search (new-api's MaxRecentItems). */
const SEARCH_LIMIT = 100;

export interface LogFilter {
  type?: number;
  userId?: number;
  username?: string;
  tokenName?: string;
  modelName?: string;
  startTimestamp?: number;
  endTimestamp?: number;
  channel?: number;
  group?: string;
}

/** A log row as the console sees it: new-api names channel_id `channel` and adds `channel_name`. */
export type LogView = Omit<Log, 'channel_id' | 'is_stream'> & {
  channel: number;
  channel_name: string;
  is_stream: boolean;
};

type LogQuery = SelectQueryBuilder<Database, 'logs', any>;

function applyFilter(q: LogQuery, f: LogFilter, opts: { withTime: boolean }): LogQuery {
  if (f.type) q = q.where('type', '=', f.type);
  if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
  if (f.username) q = q.where('username', '=', f.username);
  if (f.tokenName) q = q.where('token_name', '=', f.tokenName);
  // new-api's LIKE without wildcards, whose `%` and `_` matched anything: here they match themselves
  if (f.modelName) q = q.where(likeExactly('model_name', f.modelName));
  if (opts.withTime && f.startTimestamp) q = q.where('created_at', '>=', f.startTimestamp);
  if (opts.withTime && f.endTimestamp) q = q.where('created_at', '<=', f.endTimestamp);
  if (f.channel) q = q.where('channel_id', '=', f.channel);
  if (f.group) q = q.where('group', '=', f.group);
  return q;
}

async function channelNames(ctx: AppContext, ids: number[]): Promise<Map<number, string>> {
  const wanted = [...new Set(ids.filter((id) => id > 0))];
  const names = new Map<number, string>();
  for (let i = 0; i < wanted.length; i += 500) {
    const rows = await ctx.db
      .selectFrom('channels')
      .select(['id', 'name'])
      .where('id', 'in', wanted.slice(i, i + 500))
      .execute();
    for (const r of rows) names.set(Number(r.id), r.name);
  }
  return names;
}

async function toViews(ctx: AppContext, rows: Log[]): Promise<LogView[]> {
  const names = await channelNames(
    ctx,
    rows.map((r) => Number(r.channel_id)),
  );
  return rows.map(({ channel_id, ...rest }) => ({
    ...rest,
    is_stream: !!rest.is_stream,
    channel: Number(channel_id),
    channel_name: names.get(Number(channel_id)) ?? '',
  }));
}

/** What an end user may see of their own logs (new-api-compat.md §3.5): id % 1024, no channel name, no admin_info. */
export function forUser(row: LogView): LogView {
  let other = row.other;
  if (other) {
    try {
      const parsed = JSON.parse(other);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && 'admin_info' in parsed) {
        delete parsed.admin_info;
        other = JSON.stringify(parsed);
      }
    } catch {
      /* not JSON: leave as stored */
    }
  }
  return { ...row, id: row.id % 1024, channel_name: '', other };
}

export interface LogPage {
  items: LogView[];
  total: number;
  page: number;
  page_size: number;
}

/** The log page's two statements, the total and the page's rows (bench/log-million.mjs and a plan test EXPLAIN them). */
export function logPageQueries(db: Kysely<Database>, f: LogFilter, page: number, pageSize: number) {
  const base = applyFilter(db.selectFrom('logs'), f, { withTime: true });
  return {
    count: base.select((eb) => eb.fn.countAll<number>().as('n')),
    rows: base
      .selectAll()
      .orderBy('id', 'desc')
      .limit(pageSize)
      .offset((page - 1) * pageSize),
  };
}

export async function queryLogs(ctx: AppContext, f: LogFilter, page: number, pageSize: number): Promise<LogPage> {
  const q = logPageQueries(ctx.logDb, f, page, pageSize);
  const { n } = await q.count.executeTakeFirstOrThrow();
  const rows = (await q.rows.execute()) as Log[];
  return { items: await toViews(ctx, rows), total: Number(n), page, page_size: pageSize };
}

export interface LogStat {
  quota: number;
  rpm: number;
  tpm: number;
}

/** quota: consume logs matching the filters; rpm/tpm: consume logs of the last 60 s matching the non-time filters. */
export async function logStat(ctx: AppContext, f: LogFilter): Promise<LogStat> {
  const s = logStatQueries(ctx.logDb, f, nowSec());
  const q = await s.quota.executeTakeFirstOrThrow();
  const r = await s.lastMinute.executeTakeFirstOrThrow();
  return { quota: Number(q.quota), rpm: Number(r.rpm), tpm: Number(r.tpm) };
}

/** logStat's two statements (EXPLAINed by bench/log-million.mjs and a plan test, as logPageQueries). */
export function logStatQueries(db: Kysely<Database>, f: LogFilter, now: number) {
  const consume = { ...f, type: LOG_TYPE_CONSUME };
  return {
    quota: applyFilter(db.selectFrom('logs'), consume, { withTime: true }).select(
      sql<number>`coalesce(sum(quota), 0)`.as('quota'),
    ),
    lastMinute: applyFilter(db.selectFrom('logs'), consume, { withTime: false })
      .where('created_at', '>=', now - 60)
      .select([
        sql<number>`count(*)`.as('rpm'),
        sql<number>`coalesce(sum(prompt_tokens), 0) + coalesce(sum(completion_tokens), 0)`.as('tpm'),
      ]),
  };
}

/** Log search: the type equals a numeric keyword, or the content starts with the keyword; newest 100. */
export async function searchLogs(ctx: AppContext, keyword: string, userId?: number): Promise<LogView[]> {
  let q = ctx.logDb.selectFrom('logs');
  if (userId !== undefined) q = q.where('user_id', '=', userId);
  const kw = keyword.trim();
  if (kw) {
    q = q.where((eb) => {
      const ors: Expression<SqlBool>[] = [likePrefix('content', kw)];
      if (/^\d{1,9}$/.test(kw)) ors.push(eb('type', '=', Number(kw)));
      return eb.or(ors);
    });
  }
  const rows = (await q.selectAll().orderBy('id', 'desc').limit(SEARCH_LIMIT).execute()) as Log[];
  return toViews(ctx, rows);
}

/** TOKEN_LOG_LIMIT newest rows per call: the route needs no login, only the key, and new-api's unbounded answer grows with the table */
const TOKEN_LOG_LIMIT = 1000;

/** GET /api/log/token: a token's logs, newest first, as its owner sees them (forUser). */
export async function tokenLogs(ctx: AppContext, tokenId: number): Promise<LogView[]> {
  const rows = (await ctx.logDb
    .selectFrom('logs')
    .selectAll()
    .where('token_id', '=', tokenId)
    .orderBy('id', 'desc')
    .limit(TOKEN_LOG_LIMIT)
    .execute()) as Log[];
  return (await toViews(ctx, rows)).map(forUser);
}

// ---------------------------------------------------------------------------------------------------------
// Usage dashboard (new-api-compat.md §2.11, §5.8): hourly buckets in `quota_data` (main database).

export const DATA_SELF_MAX_SPAN_SEC = 30 * 24 * 3600;

export interface QuotaDataRow {
  model_name: string;
  created_at: number;
  count: number;
  quota: number;
  token_used: number;
}

/** Admin view: per model and hour, summed over every user. */
export async function quotaDataByModelHour(ctx: AppContext, start: number, end: number): Promise<QuotaDataRow[]> {
  let q = ctx.db.selectFrom('quota_data');
  if (start) q = q.where('created_at', '>=', start);
  if (end) q = q.where('created_at', '<=', end);
  const rows = await q
    .select([
      'model_name',
      'created_at',
      sql<number>`sum(${sql.ref('count')})`.as('count'),
      sql<number>`sum(${sql.ref('quota')})`.as('quota'),
      sql<number>`sum(${sql.ref('token_used')})`.as('token_used'),
    ])
    .groupBy(['model_name', 'created_at'])
    .orderBy('created_at')
    .orderBy('model_name')
    .execute();
  return rows.map((r) => ({
    ...r,
    created_at: Number(r.created_at),
    count: Number(r.count),
    quota: Number(r.quota),
    token_used: Number(r.token_used),
  }));
}

export interface QuotaDataOwner {
  username?: string;
  userId?: number;
}

/** Raw buckets of one user, by username (admin filter) or user id (self view). */
export async function quotaDataRows(
  ctx: AppContext,
  who: QuotaDataOwner,
  start: number,
  end: number,
): Promise<QuotaDataRecord[]> {
  let q = ctx.db.selectFrom('quota_data').selectAll();
  if (who.username !== undefined) q = q.where('username', '=', who.username);
  if (who.userId !== undefined) q = q.where('user_id', '=', who.userId);
  if (start) q = q.where('created_at', '>=', start);
  if (end) q = q.where('created_at', '<=', end);
  return q.orderBy('created_at').orderBy('model_name').execute();
}

/**
 * Rows of the dashboard with the buckets not flushed to quota_data yet (QuotaData.withUnflushed) added: to the row of
 * the same key (`keyOf`), or as rows of their own (`rowOf`), in the queries' order (hour, then model).
 */
function addUnflushed<
  R extends { created_at: number; model_name: string; count: number; quota: number; token_used: number },
>(
  rows: R[],
  unflushed: UsageBucket[],
  keyOf: (r: Pick<R, 'created_at' | 'model_name'> & { user_id?: number; username?: string }) => string,
  rowOf: (b: UsageBucket) => R,
): R[] {
  if (!unflushed.length) return rows;
  const out = rows.map((r) => ({ ...r }));
  const byKey = new Map<string, R>();
  for (const r of out) if (!byKey.has(keyOf(r))) byKey.set(keyOf(r), r);
  for (const b of unflushed) {
    const fresh = rowOf(b);
    const r = byKey.get(keyOf(fresh));
    if (!r) {
      out.push(fresh);
      byKey.set(keyOf(fresh), fresh);
      continue;
    }
    r.count += b.count;
    r.quota += b.quota;
    r.token_used += b.tokenUsed;
  }
  return out.sort(
    (a, b) => a.created_at - b.created_at || (a.model_name < b.model_name ? -1 : a.model_name > b.model_name ? 1 : 0),
  );
}

const inRange = (b: UsageBucket, start: number, end: number) => (!start || b.hour >= start) && (!end || b.hour <= end);

/** quotaDataByModelHour's rows with the unflushed buckets of the range. */
export function withUnflushedByModelHour(
  rows: QuotaDataRow[],
  unflushed: UsageBucket[],
  start: number,
  end: number,
): QuotaDataRow[] {
  return addUnflushed(
    rows,
    unflushed.filter((b) => inRange(b, start, end)),
    (r) => `${r.model_name}\u0000${r.created_at}`,
    (b) => ({ model_name: b.model, created_at: b.hour, count: b.count, quota: b.quota, token_used: b.tokenUsed }),
  );
}

/** quotaDataRows's rows with the owner's unflushed buckets of the range (id 0 for a bucket with no row yet). */
export function withUnflushedRows(
  rows: QuotaDataRecord[],
  unflushed: UsageBucket[],
  who: QuotaDataOwner,
  start: number,
  end: number,
): QuotaDataRecord[] {
  return addUnflushed(
    rows,
    unflushed.filter(
      (b) =>
        inRange(b, start, end) &&
        (who.username === undefined || b.username === who.username) &&
        (who.userId === undefined || b.userId === who.userId),
    ),
    (r) => `${r.user_id}\u0000${r.username}\u0000${r.model_name}\u0000${r.created_at}`,
    (b) => ({
      id: 0,
      user_id: b.userId,
      username: b.username,
      model_name: b.model,
      created_at: b.hour,
      count: b.count,
      quota: b.quota,
      token_used: b.tokenUsed,
    }),
  );
}
