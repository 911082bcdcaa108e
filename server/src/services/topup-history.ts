// The top-up history (new-api's GET /api/user/topup/self and, for admins, GET /api/user/topup): orders newest first,
// a page at a time, optionally narrowed to trade numbers containing a keyword. A user's list is pinned to their own
// id by the caller; only the admin list spans every user.
import type { AppContext } from '../context.js';
import { likeContains } from '../db/like.js';

export interface TopUpHistoryQuery {
  /** only this user's orders; undefined lists every user's (admin) */
  userId?: number;
  keyword: string;
  page: number;
  pageSize: number;
}

export interface TopUpRow {
  id: number;
  user_id: number;
  amount: number;
  money: number;
  trade_no: string;
  payment_method: string;
  create_time: number;
  status: string;
}

/** new-api's page object: `{page, page_size, total, items}` */
export interface TopUpPage {
  page: number;
  page_size: number;
  total: number;
  items: TopUpRow[];
}

/** Longest keyword searched: a trade number is at most 191 characters. */
const MAX_KEYWORD = 191;

export async function listTopUps(ctx: AppContext, q: TopUpHistoryQuery): Promise<TopUpPage> {
  const keyword = q.keyword.trim().slice(0, MAX_KEYWORD);
  let base = ctx.db.selectFrom('top_ups');
  if (q.userId !== undefined) base = base.where('user_id', '=', q.userId);
  if (keyword) base = base.where(likeContains('trade_no', keyword));
  const [counted, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
    base
      .select(['id', 'user_id', 'amount', 'money', 'trade_no', 'payment_method', 'create_time', 'status'])
      .orderBy('id', 'desc')
      .limit(q.pageSize)
      .offset((q.page - 1) * q.pageSize)
      .execute(),
  ]);
  return {
    page: q.page,
    page_size: q.pageSize,
    total: Number(counted.n),
    // PostgreSQL and MySQL answer bigint columns as strings
    items: rows.map((r) => ({
      id: Number(r.id),
      user_id: Number(r.user_id),
      amount: Number(r.amount),
      money: Number(r.money),
      trade_no: r.trade_no,
      payment_method: r.payment_method ?? '',
      create_time: Number(r.create_time),
      status: r.status,
    })),
  };
}
