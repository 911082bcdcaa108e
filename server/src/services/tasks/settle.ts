// Settling a task at SUCCESS on the units its platform reports (Kling's final_unit_deduction, Ark's total_tokens). A
// task whose model is priced by ModelRatio only was charged new-api's estimate at submit; here it is re-priced with the
// ratios taken then (tasks.private_data's billing_context: a price changed meanwhile re-prices nothing), and the
// difference goes back to, or is taken from, the source that paid (wallet or plan windows), the token, the user's and
// the channel's used quota and the task row. The SUCCESS compare-and-set, the adjustment and its log row are one
// transaction: two pollers, or a crash in the middle, cannot apply it twice or lose it. An extra charge never takes
// the wallet or a limited token below zero (new-api's does): what the balance allows is taken, the rest is logged as
// unpaid. Per-call tasks (a ModelPrice, TASK_PRICE_PATCH) are not adjusted.
import type { Insertable, Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { nowSec } from '../../lib/time.js';
import { ratioPpmOf, settledTaskQuota } from '../pricing/index.js';
import { chargePlanTx, planChargeInPeriod, refundToPlanTx, type TaskPlanBilling } from '../subscriptions/refund.js';
import { LOG_TYPE_CONSUME, logQuota } from '../user-logs.js';
import type { FetchedTaskState } from './apply.js';
import { chargedQuota, readBilling } from './refund.js';
import { LOG_TYPE_REFUND, TASK_STATUS, TERMINAL_STATUSES } from './status.js';

/** The ratios a ratio-priced task is settled with, from its billing context. */
export interface SettleContext {
  modelRatio: number;
  groupRatio: number;
  /** the product of the other ratios (a video's units × size ratio), in millionths */
  otherPpm: number;
}

/**
 * The billing context kept at submit, or null when the task is billed per call (or has none: a row written before).
 * Ours carries other_ratio_ppm; new-api's other_ratios map (each ratio ≠ 1 multiplied in) is read too.
 */
export function settleContextOf(privateData: string): SettleContext | null {
  let bc: Record<string, unknown>;
  try {
    const v = JSON.parse(privateData || '{}') as { billing_context?: unknown };
    if (!v.billing_context || typeof v.billing_context !== 'object') return null;
    bc = v.billing_context as Record<string, unknown>;
  } catch {
    return null;
  }
  const modelRatio = Number(bc.model_ratio);
  const groupRatio = Number(bc.group_ratio);
  if (bc.per_call_billing !== false || !(modelRatio > 0) || !(groupRatio >= 0)) return null;
  let otherPpm = Number(bc.other_ratio_ppm);
  if (!(otherPpm > 0)) {
    let product = 1;
    const others = bc.other_ratios && typeof bc.other_ratios === 'object' ? Object.values(bc.other_ratios) : [];
    for (const r of others) if (typeof r === 'number' && r > 0 && r !== 1) product *= r;
    otherPpm = ratioPpmOf(product);
  }
  return { modelRatio, groupRatio, otherPpm };
}

interface Settled {
  userId: number;
  tokenId: number;
  /** the log row to write after the commit, when the logs are in another database */
  logRow: Insertable<Database['logs']> | null;
}

/**
 * Marks the task SUCCESS unless it is already terminal, and settles its charge on `state.usedUnits`. Returns whether
 * this call made the change (false: another poller or an earlier run did).
 */
export async function succeedTaskWithSettlement(
  ctx: AppContext,
  id: number,
  state: FetchedTaskState,
  now = nowSec(),
): Promise<boolean> {
  const settled = await ctx.db.transaction().execute(async (trx): Promise<Settled | null> => {
    const changed = await trx
      .updateTable('tasks')
      .set({
        status: TASK_STATUS.success,
        data: JSON.stringify(state.data ?? null),
        updated_at: now,
        progress: '100%',
        finish_time: now,
      })
      .where('id', '=', id)
      .where('status', 'not in', TERMINAL_STATUSES)
      .executeTakeFirst();
    if (Number(changed.numUpdatedRows) !== 1) return null;
    const row = await trx
      .selectFrom('tasks')
      .select(['task_id', 'user_id', 'group', 'channel_id', 'quota', 'private_data', 'submit_time'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const userId = Number(row.user_id);
    const nothing = { userId, tokenId: 0, logRow: null };
    const sc = settleContextOf(row.private_data);
    const units = state.usedUnits ?? 0;
    if (!sc || !(units > 0)) return nothing;
    const billing = readBilling(row.private_data);
    // a charge that never committed is not settled either (refund.ts's rule)
    const pre = await chargedQuota(ctx, trx, row, billing);
    if (pre <= 0) return nothing;
    const actual = settledTaskQuota(units, sc.modelRatio, sc.groupRatio, sc.otherPpm);
    const delta = actual - pre;
    if (delta === 0) return nothing;
    const submitTime = Number(row.submit_time);
    const moved =
      delta > 0
        ? await takeExtra(ctx, trx, { userId, tokenId: billing.tokenId, plan: billing.plan, submitTime }, delta)
        : await giveBack(ctx, trx, { userId, tokenId: billing.tokenId, plan: billing.plan, submitTime }, -delta);
    // signed: what the task finally cost more (+) or less (−) than its submit's charge
    const signed = delta > 0 ? moved : -moved;
    const unpaid = delta > 0 ? delta - moved : 0;
    if (signed !== 0) {
      await trx
        .updateTable('users')
        .set((eb) => ({ used_quota: eb('used_quota', '+', signed) }))
        .where('id', '=', userId)
        .execute();
      await trx
        .updateTable('channels')
        .set((eb) => ({ used_quota: eb('used_quota', '+', signed) }))
        .where('id', '=', Number(row.channel_id))
        .execute();
      await trx
        .updateTable('tasks')
        .set({ quota: Number(row.quota) + signed })
        .where('id', '=', id)
        .execute();
    }
    if (unpaid > 0)
      ctx.log.warn(
        { taskId: row.task_id, userId, extra: delta, taken: moved, unpaid },
        'task settlement: the balance did not cover the extra charge',
      );
    const user = await trx.selectFrom('users').select('username').where('id', '=', userId).executeTakeFirst();
    const ratios =
      `tokens=${units}, modelRatio=${sc.modelRatio.toFixed(2)}, groupRatio=${sc.groupRatio.toFixed(2)}, ` +
      `otherMultiplier=${(sc.otherPpm / 1e6).toFixed(4)}`;
    // whole texts, each with its translations (web/src/i18n/server-messages.ts and the locale files)
    const task = row.task_id;
    const content =
      delta < 0
        ? `异步任务按实际用量结算 ${task}（token重算：${ratios}），退还 ${logQuota(ctx, moved)}`
        : unpaid > 0
          ? `异步任务按实际用量结算 ${task}（token重算：${ratios}），补扣 ${logQuota(ctx, moved)}，余额不足未扣 ${logQuota(ctx, unpaid)}`
          : `异步任务按实际用量结算 ${task}（token重算：${ratios}），补扣 ${logQuota(ctx, moved)}`;
    const logRow: Insertable<Database['logs']> = {
      user_id: userId,
      username: user?.username ?? '',
      created_at: now,
      type: delta > 0 ? LOG_TYPE_CONSUME : LOG_TYPE_REFUND,
      content,
      token_name: billing.tokenName,
      token_id: billing.tokenId,
      model_name: billing.modelName,
      quota: moved,
      channel_id: Number(row.channel_id),
      group: row.group,
      is_stream: false,
      other: JSON.stringify({
        is_task: true,
        task_id: row.task_id,
        pre_consumed_quota: pre,
        actual_quota: actual,
        total_tokens: units,
        model_ratio: sc.modelRatio,
        group_ratio: sc.groupRatio,
        ...(unpaid > 0 ? { unpaid_quota: unpaid } : {}),
        ...(billing.plan ? { billing_source: 'subscription', subscription_id: billing.plan.subscriptionId } : {}),
      }),
    };
    // with the adjustment, as the refund's row (refund.ts); in a separate log database it follows the commit
    if (ctx.logDb === ctx.db) {
      await trx.insertInto('logs').values(logRow).execute();
      return { userId, tokenId: billing.tokenId, logRow: null };
    }
    return { userId, tokenId: billing.tokenId, logRow };
  });
  if (!settled) return false;
  if (settled.logRow) await ctx.logDb.insertInto('logs').values(settled.logRow).execute();
  // cached balances are read again from the database
  ctx.changes.publish({ kind: 'user', id: settled.userId });
  if (settled.tokenId) ctx.changes.publish({ kind: 'token', userId: settled.userId });
  return true;
}

interface Payer {
  userId: number;
  tokenId: number;
  plan: TaskPlanBilling | null;
  submitTime: number;
}

/** Money back: to the token and to the source that paid (the plan's windows in their periods, else the wallet). */
async function giveBack(ctx: AppContext, trx: Kysely<Database>, p: Payer, quota: number): Promise<number> {
  // the token's row first, the order settlement and the refunds lock them in
  if (p.tokenId)
    await trx
      .updateTable('tokens')
      .set((eb) => ({ remain_quota: eb('remain_quota', '+', quota), used_quota: eb('used_quota', '-', quota) }))
      .where('id', '=', p.tokenId)
      .execute();
  if (p.plan) await refundToPlanTx(ctx, trx, p.plan, quota, p.submitTime);
  else
    await trx
      .updateTable('users')
      .set((eb) => ({ quota: eb('quota', '+', quota) }))
      .where('id', '=', p.userId)
      .execute();
  return quota;
}

/**
 * An extra charge, capped by what the wallet (when it paid) and a limited token hold: the rows are read locked (the
 * token first) and each debit is conditional on the balance still covering it. Returns what was taken.
 */
async function takeExtra(ctx: AppContext, trx: Kysely<Database>, p: Payer, extra: number): Promise<number> {
  let take = extra;
  let tokenLimited = false;
  if (p.tokenId) {
    let q = trx.selectFrom('tokens').select(['remain_quota', 'unlimited_quota']).where('id', '=', p.tokenId);
    if (ctx.dbKind !== 'sqlite') q = q.forUpdate();
    const token = await q.executeTakeFirst();
    if (token && !token.unlimited_quota) {
      tokenLimited = true;
      take = Math.min(take, Math.max(0, Number(token.remain_quota)));
    }
  }
  // a plan whose windows have all been reset since the submit pays nothing more: the rest is unpaid
  if (p.plan && !(await planChargeInPeriod(trx, p.plan))) return 0;
  if (!p.plan) {
    let q = trx.selectFrom('users').select('quota').where('id', '=', p.userId);
    if (ctx.dbKind !== 'sqlite') q = q.forUpdate();
    const user = await q.executeTakeFirst();
    take = Math.min(take, Math.max(0, Number(user?.quota ?? 0)));
  }
  if (take <= 0) return 0;
  if (p.plan) await chargePlanTx(ctx, trx, p.plan, take, p.submitTime);
  else {
    const paid = await trx
      .updateTable('users')
      .set((eb) => ({ quota: eb('quota', '-', take) }))
      .where('id', '=', p.userId)
      .where('quota', '>=', take)
      .executeTakeFirst();
    if (Number(paid.numUpdatedRows) !== 1) return 0;
  }
  if (p.tokenId) {
    let upd = trx
      .updateTable('tokens')
      .set((eb) => ({ remain_quota: eb('remain_quota', '-', take), used_quota: eb('used_quota', '+', take) }))
      .where('id', '=', p.tokenId);
    if (tokenLimited) upd = upd.where('remain_quota', '>=', take);
    await upd.execute();
  }
  return take;
}
