// Redemption codes (new-api-compat.md §2.6, §3.4, §3.5, §9.2; spec §4 Redemption status, §5 Redemption).
// Admins create, list, edit and soft-delete codes; a user redeems one with POST /api/user/topup. Redeeming is a single
// conditional UPDATE (status 1 → 3) inside the transaction that credits the user, so exactly one of any number of
// concurrent requests for the same key wins on every database, without new-api's process-wide mutex.
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import type { Database, Redemption } from '../db/schema.js';
import { randomHex32 } from '../lib/random.js';
import { nowSec } from '../lib/time.js';
import { likePrefix } from '../db/like.js';
import { intInput } from '../lib/input.js';
import { creditLiveUser, UserFacingError } from './users.js';
import { LOG_TYPE_TOPUP, logQuota, recordUserLog } from './user-logs.js';

export const REDEMPTION_STATUS_ENABLED = 1;
export const REDEMPTION_STATUS_DISABLED = 2;
export const REDEMPTION_STATUS_USED = 3;

export const REDEMPTION_NAME_MAX = 20;
export const REDEMPTION_BATCH_MAX = 100;
export const REDEMPTION_DEFAULT_PAGE_SIZE = 10;
const MAX_PAGE_SIZE = 100;

/** The wire shape: the row without deleted_at, plus new-api's API-only `count` (always 0 when read back). */
export type PublicRedemption = Omit<Redemption, 'deleted_at'> & { count: number };

export interface RedemptionPage {
  items: PublicRedemption[];
  total: number;
  page: number;
  page_size: number;
}

type Body = Record<string, unknown>;

const COLUMNS = [
  'id',
  'user_id',
  'key',
  'status',
  'name',
  'quota',
  'created_time',
  'redeemed_time',
  'used_user_id',
] as const;

function view(row: Omit<Redemption, 'deleted_at'>): PublicRedemption {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    // PostgreSQL char(32) pads shorter values; keys are always 32 chars but trim defensively.
    key: String(row.key).trim(),
    status: Number(row.status),
    name: row.name,
    quota: Number(row.quota),
    created_time: Number(row.created_time),
    redeemed_time: Number(row.redeemed_time),
    used_user_id: Number(row.used_user_id),
    count: 0,
  };
}

const int = (v: unknown) => intInput(v);

function redemptionName(v: unknown): string {
  const name = typeof v === 'string' ? v.trim() : '';
  const len = [...name].length;
  if (len === 0 || len > REDEMPTION_NAME_MAX) throw new UserFacingError('兑换码名称长度必须在1-20之间');
  return name;
}

function redemptionQuota(v: unknown): number {
  const q = int(v);
  if (q === null || q <= 0) throw new UserFacingError('兑换码额度必须是正整数');
  return q;
}

/**
 * `p` is 1-based as the console sends it. new-api computes the offset as (p-1)*size after clamping p<0 to 0, so p=0
 * produced a negative offset (a database error on PostgreSQL/MySQL); here any p below 1 means the first page.
 */
export function redemptionPageParams(q: { p?: unknown; page_size?: unknown }): { page: number; pageSize: number } {
  let page = Number.parseInt(String(q.p ?? ''), 10);
  if (!Number.isFinite(page) || page < 1) page = 1;
  let pageSize = Number.parseInt(String(q.page_size ?? ''), 10);
  if (!Number.isFinite(pageSize) || pageSize < 1) pageSize = REDEMPTION_DEFAULT_PAGE_SIZE;
  if (pageSize > MAX_PAGE_SIZE) pageSize = MAX_PAGE_SIZE;
  return { page, pageSize };
}

const live = (db: Kysely<Database>) => db.selectFrom('redemptions').where('deleted_at', 'is', null);

/** Lists codes newest first; with a keyword, matches the id (numeric keyword) or a name prefix, as new-api. */
export async function listRedemptions(
  db: Kysely<Database>,
  opts: { keyword?: string; page: number; pageSize: number },
): Promise<RedemptionPage> {
  const keyword = opts.keyword?.trim() ?? '';
  let q = live(db);
  if (keyword) {
    const id = /^\d+$/.test(keyword) && Number.isSafeInteger(Number(keyword)) ? Number(keyword) : null;
    q = q.where((eb) =>
      id === null ? likePrefix('name', keyword) : eb.or([eb('id', '=', id), likePrefix('name', keyword)]),
    );
  }
  const totalRow = await q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .select([...COLUMNS])
    .orderBy('id', 'desc')
    .limit(opts.pageSize)
    .offset((opts.page - 1) * opts.pageSize)
    .execute();
  return { items: rows.map(view), total: Number(totalRow.n), page: opts.page, page_size: opts.pageSize };
}

export async function getRedemption(db: Kysely<Database>, id: number): Promise<PublicRedemption | null> {
  const row = await live(db)
    .select([...COLUMNS])
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? view(row) : null;
}

/** Creates `count` codes in one transaction (all or none; new-api could stop half way) and returns their keys. */
export async function createRedemptions(ctx: AppContext, creatorId: number, body: Body): Promise<string[]> {
  const name = redemptionName(body.name);
  const quota = redemptionQuota(body.quota);
  const count = int(body.count ?? 1);
  if (count === null || count <= 0) throw new UserFacingError('兑换码个数必须大于0');
  if (count > REDEMPTION_BATCH_MAX) throw new UserFacingError('一次兑换码批量生成的个数不能大于 100');
  const now = nowSec();
  const keys = Array.from({ length: count }, () => randomHex32());
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('redemptions')
      .values(
        keys.map((key) => ({
          user_id: creatorId,
          key,
          status: REDEMPTION_STATUS_ENABLED,
          name,
          quota,
          created_time: now,
        })),
      )
      .execute();
  });
  return keys;
}

/**
 * PUT /api/redemption. With statusOnly only the status changes (enable/disable); otherwise name and quota change.
 * A used code cannot be re-enabled (that would let it be redeemed twice) and only an unused code can be edited;
 * both rules are conditions of the UPDATE itself, so a redemption racing the edit cannot slip between check and write.
 */
export async function updateRedemption(ctx: AppContext, body: Body, statusOnly: boolean): Promise<PublicRedemption> {
  const id = int(body.id);
  if (id === null || id <= 0) throw new UserFacingError('无效的兑换码 ID');
  const current = await getRedemption(ctx.db, id);
  if (!current) throw new UserFacingError('兑换码不存在');
  let updated: bigint;
  if (statusOnly) {
    const status = int(body.status);
    if (status !== REDEMPTION_STATUS_ENABLED && status !== REDEMPTION_STATUS_DISABLED)
      throw new UserFacingError('无效的兑换码状态');
    const res = await ctx.db
      .updateTable('redemptions')
      .set({ status })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .where('status', 'in', [REDEMPTION_STATUS_ENABLED, REDEMPTION_STATUS_DISABLED])
      .executeTakeFirst();
    updated = res.numUpdatedRows;
  } else {
    const name = redemptionName(body.name);
    const quota = redemptionQuota(body.quota);
    const res = await ctx.db
      .updateTable('redemptions')
      .set({ name, quota })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .where('status', '=', REDEMPTION_STATUS_ENABLED)
      .executeTakeFirst();
    updated = res.numUpdatedRows;
  }
  if (Number(updated) !== 1) {
    const now = await getRedemption(ctx.db, id);
    if (!now) throw new UserFacingError('兑换码不存在');
    if (now.status === REDEMPTION_STATUS_USED) throw new UserFacingError('该兑换码已被使用，无法修改');
    throw new UserFacingError('只能编辑未使用的兑换码');
  }
  return (await getRedemption(ctx.db, id))!;
}

/** Soft delete (deleted_at), as new-api; the key stays reserved by the unique index. */
export async function deleteRedemption(ctx: AppContext, id: number): Promise<boolean> {
  const res = await ctx.db
    .updateTable('redemptions')
    .set({ deleted_at: new Date() })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Redeems a key for a user and returns the credited quota. The status flip and the credit commit together; a
 * second request for the same key finds no row with status 1 and gets 该兑换码已被使用.
 */
export async function redeemCode(ctx: AppContext, userId: number, rawKey: unknown): Promise<number> {
  const key = typeof rawKey === 'string' ? rawKey.trim() : '';
  if (!key) throw new UserFacingError('未提供兑换码');
  // Keys are 32 hex chars; anything else cannot match (and must not reach a char(32) comparison as a long string).
  if (key.length > 64) throw new UserFacingError('无效的兑换码');
  const now = nowSec();
  const won = await ctx.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('redemptions')
      .set({ status: REDEMPTION_STATUS_USED, used_user_id: userId, redeemed_time: now })
      .where('key', '=', key)
      .where('status', '=', REDEMPTION_STATUS_ENABLED)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return null;
    const row = await trx
      .selectFrom('redemptions')
      .select(['id', 'quota'])
      .where('key', '=', key)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    const quota = Number(row.quota);
    // No user to credit: roll the code back to unused by failing the transaction.
    if (!(await creditLiveUser(trx, userId, quota))) throw new UserFacingError('用户不存在');
    return { id: Number(row.id), quota };
  });
  if (!won) {
    const row = await live(ctx.db).select(['status']).where('key', '=', key).executeTakeFirst();
    if (!row) throw new UserFacingError('无效的兑换码');
    throw new UserFacingError('该兑换码已被使用');
  }
  ctx.changes.publish({ kind: 'user', id: userId });
  await recordUserLog(ctx, userId, LOG_TYPE_TOPUP, `通过兑换码充值 ${logQuota(ctx, won.quota)}，兑换码ID ${won.id}`);
  return won.quota;
}
