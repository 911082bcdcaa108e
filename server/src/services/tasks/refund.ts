// Failing an asynchronous task and giving its charge back. The task was charged when the upstream accepted it; a
// FAILURE or a timeout returns that charge exactly once, to the user and to the token, with a refund log row. The
// status change is a compare-and-set on the task row (only a task not yet terminal changes), and the credit and the
// log row are written in the same transaction, so two pollers, or a restart in the middle, cannot refund twice, and
// a task that has succeeded is never refunded.
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { nowSec } from '../../lib/time.js';
import { LOG_TYPE_CONSUME, logQuota } from '../user-logs.js';
import { LOG_TYPE_REFUND, TASK_STATUS, TERMINAL_STATUSES } from './status.js';
import { refundToPlanTx, taskPlanOf, type TaskPlanBilling } from '../subscriptions/refund.js';

/** the consume row is written after the task row's submit_time; a little slack for clocks of other instances */
const CHARGE_LOG_SLACK_SEC = 300;

/** Who paid for a task: kept in tasks.private_data when it is submitted. */
export interface TaskBilling {
  tokenId: number;
  tokenName: string;
  modelName: string;
}

export interface TaskToFail {
  /** tasks.id */
  id: number;
  reason: string;
}

/**
 * Marks the task FAILURE (progress 100%) unless it is already terminal, and refunds its quota. Returns whether this
 * call made the change (false: another poller or an earlier run did, or the task is finished).
 */
export async function failTaskWithRefund(ctx: AppContext, task: TaskToFail, now = nowSec()): Promise<boolean> {
  const refunded = await ctx.db.transaction().execute(async (trx) => {
    const changed = await trx
      .updateTable('tasks')
      .set({
        status: TASK_STATUS.failure,
        progress: '100%',
        fail_reason: task.reason,
        finish_time: now,
        updated_at: now,
      })
      .where('id', '=', task.id)
      .where('status', 'not in', TERMINAL_STATUSES)
      .executeTakeFirst();
    if (Number(changed.numUpdatedRows) !== 1) return null;
    const row = await trx
      .selectFrom('tasks')
      .select(['task_id', 'user_id', 'group', 'channel_id', 'quota', 'private_data', 'submit_time'])
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    const billing = readBilling(row.private_data);
    const quota = await chargedQuota(ctx, trx, row, billing);
    if (quota <= 0) return { userId: Number(row.user_id), tokenId: 0 };
    // the token's row first, the order settlement and the relay's refunds lock them in
    if (billing.tokenId) {
      await trx
        .updateTable('tokens')
        .set((eb) => ({ remain_quota: eb('remain_quota', '+', quota), used_quota: eb('used_quota', '-', quota) }))
        .where('id', '=', billing.tokenId)
        .execute();
    }
    // back to the source that paid: the plan's windows (while still in the periods charged), else the wallet
    if (billing.plan) await refundToPlanTx(ctx, trx, billing.plan, quota, Number(row.submit_time));
    else
      await trx
        .updateTable('users')
        .set((eb) => ({ quota: eb('quota', '+', quota) }))
        .where('id', '=', Number(row.user_id))
        .execute();
    const user = await trx
      .selectFrom('users')
      .select('username')
      .where('id', '=', Number(row.user_id))
      .executeTakeFirst();
    // Written with the credit so that a refund is never without its row nor a row without its refund. With
    // LOG_SQL_DSN the logs live in another database and this row follows the commit instead.
    const logRow = {
      user_id: Number(row.user_id),
      username: user?.username ?? '',
      created_at: now,
      type: LOG_TYPE_REFUND,
      content: `异步任务执行失败 ${row.task_id}，补偿 ${logQuota(ctx, quota)}`,
      token_name: billing.tokenName,
      token_id: billing.tokenId,
      model_name: billing.modelName,
      quota,
      channel_id: Number(row.channel_id),
      group: row.group,
      is_stream: false,
      other: JSON.stringify({
        task_id: row.task_id,
        reason: task.reason,
        ...(billing.plan ? { billing_source: 'subscription', subscription_id: billing.plan.subscriptionId } : {}),
      }),
    };
    if (ctx.logDb === ctx.db) await trx.insertInto('logs').values(logRow).execute();
    return { userId: Number(row.user_id), tokenId: billing.tokenId, logRow: ctx.logDb === ctx.db ? null : logRow };
  });
  if (!refunded) return false;
  if (refunded.logRow) await ctx.logDb.insertInto('logs').values(refunded.logRow).execute();
  // cached balances are read again from the database
  ctx.changes.publish({ kind: 'user', id: refunded.userId });
  if (refunded.tokenId) ctx.changes.publish({ kind: 'token', userId: refunded.userId });
  return true;
}

/** the columns of a task row chargedQuota reads */
export interface ChargedTaskRow {
  task_id: string;
  user_id: number | string;
  quota: number | string;
  submit_time: number | string;
}

/**
 * The quota a task's submit actually charged: its row's quota, or 0 when that charge never committed. A task submitted
 * here is charged with a consume log row naming it, in one commit (the logs in this database); a crash between the
 * task row and that commit leaves a task whose charge never happened. Without a consume row (LogConsumeEnabled off)
 * the task row itself says so: its charge stays pending until the submit's flush has committed it
 * (relay/tasks/submit.ts markChargeCommitted); a pending one counts 0.
 */
export async function chargedQuota(
  ctx: AppContext,
  trx: Kysely<Database>,
  row: ChargedTaskRow,
  billing: { chargeLogged: boolean; chargePending: boolean },
): Promise<number> {
  const quota = Number(row.quota);
  if (billing.chargePending) return 0;
  if (quota > 0 && billing.chargeLogged && ctx.logDb === ctx.db) {
    const charged = await trx
      .selectFrom('logs')
      .select('id')
      .where('user_id', '=', Number(row.user_id))
      .where('type', '=', LOG_TYPE_CONSUME)
      .where('created_at', '>=', Number(row.submit_time) - CHARGE_LOG_SLACK_SEC)
      .where('other', 'like', `%"task_id":"${row.task_id}"%`)
      .limit(1)
      .executeTakeFirst();
    if (!charged) return 0;
  }
  return quota;
}

/**
 * The billing context in private_data. chargeLogged: a consume log row names the task (the refund's evidence);
 * chargePending: the charge's commit was never confirmed. A row with neither (consume logs off, or written by new-api)
 * is refunded its quota.
 */
export function readBilling(
  privateData: string,
): TaskBilling & { chargeLogged: boolean; chargePending: boolean; plan: TaskPlanBilling | null } {
  try {
    const v = JSON.parse(privateData || '{}') as Partial<Record<string, unknown>>;
    return {
      tokenId: Number(v.token_id) || 0,
      tokenName: typeof v.token_name === 'string' ? v.token_name : '',
      modelName: typeof v.model_name === 'string' ? v.model_name : '',
      chargeLogged: v.charge_logged === true,
      chargePending: v.charge_pending === true,
      plan: taskPlanOf(v),
    };
  } catch {
    return { tokenId: 0, tokenName: '', modelName: '', chargeLogged: false, chargePending: false, plan: null };
  }
}
