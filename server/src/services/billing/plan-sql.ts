// The statements of plan billing (docs/decisions/0015-subscription-plans.md, "Storage"): the reservation against
// every window of a subscription_usage row as ONE conditional UPDATE, the correction that applies only while a window
// is still in the reservation's period, and the node's holds per window period (subscription_holds). Slot names are
// the constants of windows.ts, never input.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DbKind } from '../../config.js';
import type { Database } from '../../db/schema.js';
import type { Slot, WindowCharge } from '../subscriptions/windows.js';

/** A number parameter typed for the dialect (PostgreSQL cannot infer a bare parameter's type inside CASE). */
function n(kind: DbKind, v: number): RawBuilder<number> {
  return kind === 'postgres' ? sql<number>`CAST(${v} AS BIGINT)` : sql<number>`${v}`;
}

const col = (slot: Slot, part: 'limit' | 'used' | 'end') => sql.ref(`${slot}_${part}`);

/**
 * Reserves `pre` on every slot of the charge, or changes nothing: a slot still in an earlier period starts again from
 * `pre`; the row is refused when a slot with a limit has no room or is already in a later period (another node's clock
 * ahead). Every used column is assigned before the end columns: MySQL reads the new value of a column set earlier.
 */
export async function reserveWindows(
  db: Kysely<Database>,
  kind: DbKind,
  subscriptionId: number,
  c: WindowCharge,
): Promise<boolean> {
  const pre = n(kind, c.pre);
  const used = c.slots.map(
    ({ slot, end }) =>
      sql`${col(slot, 'used')} = CASE WHEN ${col(slot, 'end')} < ${n(kind, end)} THEN ${pre} ELSE ${col(slot, 'used')} + ${pre} END`,
  );
  const ends = c.slots.map(({ slot, end }) => sql`${col(slot, 'end')} = ${n(kind, end)}`);
  const fits = c.slots.map(
    ({ slot, end }) =>
      sql`${col(slot, 'end')} <= ${n(kind, end)} AND (${col(slot, 'limit')} = 0 OR (CASE WHEN ${col(slot, 'end')} < ${n(kind, end)} THEN 0 ELSE ${col(slot, 'used')} END) + ${pre} <= ${col(slot, 'limit')})`,
  );
  const r =
    await sql`UPDATE subscription_usage SET ${sql.join([...used, ...ends])} WHERE user_subscription_id = ${n(kind, subscriptionId)} AND ${sql.join(fits, sql` AND `)}`.execute(
      db,
    );
  return Number(r.numAffectedRows ?? 0) === 1;
}

/**
 * Adds `delta` (final − pre of a settlement, −pre of a refund, −held of a dead node's hold) to each slot whose period
 * is still the one named: a refund after a reset credits nothing, a late extra charge does not burden the new period.
 * The use never goes below 0.
 */
export async function correctWindows(
  db: Kysely<Database>,
  kind: DbKind,
  subscriptionId: number,
  slots: WindowCharge['slots'],
  delta: number,
): Promise<void> {
  if (delta === 0 || slots.length === 0) return;
  const d = n(kind, delta);
  const sets = slots.map(
    ({ slot, end }) =>
      sql`${col(slot, 'used')} = CASE WHEN ${col(slot, 'end')} = ${n(kind, end)} THEN (CASE WHEN ${col(slot, 'used')} + ${d} < 0 THEN 0 ELSE ${col(slot, 'used')} + ${d} END) ELSE ${col(slot, 'used')} END`,
  );
  await sql`UPDATE subscription_usage SET ${sql.join(sets)} WHERE user_subscription_id = ${n(kind, subscriptionId)}`.execute(
    db,
  );
}

/** Adds a signed amount to the node's hold on each slot period (a reservation +pre, a release −pre). */
export async function addPlanHolds(
  db: Kysely<Database>,
  kind: DbKind,
  node: string,
  subscriptionId: number,
  slots: WindowCharge['slots'],
  amount: number,
): Promise<void> {
  if (amount === 0 || slots.length === 0) return;
  const values = slots.map(({ slot, end }) => ({
    node,
    user_subscription_id: subscriptionId,
    slot,
    period_end: end,
    amount,
  }));
  let q = db.insertInto('subscription_holds').values(values);
  q =
    kind === 'mysql'
      ? q.onDuplicateKeyUpdate({ amount: sql`amount + VALUES(amount)` })
      : q.onConflict((oc) =>
          oc
            .columns(['node', 'user_subscription_id', 'slot', 'period_end'])
            .doUpdateSet({ amount: sql`subscription_holds.amount + excluded.amount` }),
        );
  await q.execute();
}

/** Deletes the node's hold rows that hold nothing any more (after releases). */
export async function pruneZeroPlanHolds(db: Kysely<Database>, node: string): Promise<void> {
  await db.deleteFrom('subscription_holds').where('node', '=', node).where('amount', '<=', 0).execute();
}

/** Inserts the usage row of a subscription new-api created (its `main` slot from new-api's columns), if missing. */
export async function ensureUsageRow(
  db: Kysely<Database>,
  kind: DbKind,
  row: { user_subscription_id: number; user_id: number; main_limit: number; main_used: number; main_end: number },
): Promise<void> {
  const q = db.insertInto('subscription_usage').values(row);
  await (kind === 'mysql' ? q.ignore() : q.onConflict((oc) => oc.column('user_subscription_id').doNothing())).execute();
}

/** A subscription_usage row's slots as windows.ts reads them. */
export async function readUsage(
  db: Kysely<Database>,
  subscriptionId: number,
): Promise<Record<Slot, { limit: number; used: number; end: number }> | null> {
  const r = await db
    .selectFrom('subscription_usage')
    .selectAll()
    .where('user_subscription_id', '=', subscriptionId)
    .executeTakeFirst();
  if (!r) return null;
  const slot = (s: Slot) => ({
    limit: Number(r[`${s}_limit`]),
    used: Number(r[`${s}_used`]),
    end: Number(r[`${s}_end`]),
  });
  return {
    main: slot('main'),
    rolling: slot('rolling'),
    daily: slot('daily'),
    weekly: slot('weekly'),
    monthly: slot('monthly'),
  };
}
