// A task's charge given back to the subscription that paid it (docs/decisions/0015-subscription-plans.md, "Task
// refunds"): each window only while it is still in the period the task was charged in, so a refund after a reset
// credits nothing to the new period. new-api's tasks name no periods: their charge goes back to `main` only if it
// was made in the current `main` period.
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { correctWindows, readUsage } from '../billing/plan-sql.js';
import { zoneOrLocal } from '../limits/periods.js';
import { normalizeResetPeriod, SLOTS, slotEnd, type Slot, type WindowCharge } from './windows.js';

/** What tasks.private_data keeps of a plan-billed task: new-api's keys, and ours (the periods charged). */
export interface TaskPlanBilling {
  subscriptionId: number;
  /** slot → the end of the period charged; null for a task new-api submitted */
  ends: WindowCharge['slots'] | null;
}

/** private_data's keys for a charge on a plan. */
export function taskPlanKeys(plan: { subscriptionId: number; slots: WindowCharge['slots'] }) {
  return {
    billing_source: 'subscription',
    subscription_id: plan.subscriptionId,
    subscription_ends: Object.fromEntries(plan.slots.map((s) => [s.slot, s.end])),
  };
}

/** The plan that paid, from private_data's parsed keys; null when the wallet paid. */
export function taskPlanOf(v: Record<string, unknown>): TaskPlanBilling | null {
  if (v.billing_source !== 'subscription' || !(Number(v.subscription_id) > 0)) return null;
  const raw = v.subscription_ends;
  const ends =
    raw && typeof raw === 'object'
      ? Object.entries(raw as Record<string, unknown>)
          .filter(([slot, end]) => (SLOTS as readonly string[]).includes(slot) && Number(end) > 0)
          .map(([slot, end]) => ({ slot: slot as Slot, end: Number(end) }))
      : null;
  return { subscriptionId: Number(v.subscription_id), ends };
}

/** Gives `quota` back to the subscription's windows in the refund's transaction; new-api's columns follow `main`. */
export async function refundToPlanTx(
  ctx: AppContext,
  trx: Kysely<Database>,
  plan: TaskPlanBilling,
  quota: number,
  submitTime: number,
): Promise<void> {
  let slots = plan.ends;
  if (!slots) {
    const sub = await trx
      .selectFrom('user_subscriptions as s')
      .innerJoin('subscription_plans as p', 'p.id', 's.plan_id')
      .select([
        's.start_time',
        's.end_time',
        's.last_reset_time',
        's.amount_used',
        'p.quota_reset_period',
        'p.quota_reset_custom_seconds',
      ])
      .where('s.id', '=', plan.subscriptionId)
      .executeTakeFirst();
    if (!sub) return;
    const usage = await readUsage(trx, plan.subscriptionId);
    if (!usage) {
      // new-api's own columns: its last reset is after the task's charge, or not
      if (Number(sub.last_reset_time ?? 0) > submitTime) return;
      await trx
        .updateTable('user_subscriptions')
        .set({ amount_used: Math.max(0, Number(sub.amount_used) - quota) })
        .where('id', '=', plan.subscriptionId)
        .execute();
      return;
    }
    const end = slotEnd(
      'main',
      {
        start: Number(sub.start_time ?? 0),
        end: Number(sub.end_time ?? 0),
        mainReset: normalizeResetPeriod(sub.quota_reset_period),
        mainCustomSeconds: Number(sub.quota_reset_custom_seconds ?? 0),
        rollingSeconds: 0,
        limits: { main: usage.main.limit, rolling: 0, daily: 0, weekly: 0, monthly: 0 },
      },
      submitTime,
      zoneOrLocal(ctx.options.get('UsageLimitTimeZone')),
    );
    slots = [{ slot: 'main', end }];
  }
  await correctWindows(trx, ctx.dbKind, plan.subscriptionId, slots, -quota);
  const usage = await readUsage(trx, plan.subscriptionId);
  if (usage)
    await trx
      .updateTable('user_subscriptions')
      .set({ amount_used: usage.main.used })
      .where('id', '=', plan.subscriptionId)
      .execute();
}

/**
 * Whether any window that paid a task is still in the period it was charged in (an extra charge at completion is taken
 * from those only). A task new-api submitted names no periods: its `main` is checked by refundToPlanTx's own rule.
 */
export async function planChargeInPeriod(trx: Kysely<Database>, plan: TaskPlanBilling): Promise<boolean> {
  if (!plan.ends) return true;
  const usage = await readUsage(trx, plan.subscriptionId);
  return !!usage && plan.ends.some(({ slot, end }) => usage[slot].end === end);
}

/**
 * Takes `quota` more from the windows that paid a task (its extra charge at completion): the same windows, each only
 * while still in the period charged, so a charge after a reset takes nothing from the new period.
 */
export function chargePlanTx(
  ctx: AppContext,
  trx: Kysely<Database>,
  plan: TaskPlanBilling,
  quota: number,
  submitTime: number,
): Promise<void> {
  return refundToPlanTx(ctx, trx, plan, -quota, submitTime);
}
