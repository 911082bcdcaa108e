// Subscription plans (docs/decisions/0015-subscription-plans.md): new-api's plan rows, edited through its admin
// routes with its checks and texts, and our windows beside them in subscription_plan_limits (a plan without a row is
// new-api's: one window from total_amount and quota_reset_period). Every node keeps the plans in memory and reloads
// them on the `subscriptions` change, which every write publishes.
import type { Kysely, Selectable } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../db/schema.js';
import type { SubscriptionPlanLimitsTable, SubscriptionPlansTable } from '../../db/schema-subscriptions.js';

/** A plan as new-api's JSON has it (model.SubscriptionPlan). */
export interface PlanJson {
  id: number;
  title: string;
  subtitle: string;
  price_amount: number;
  currency: string;
  duration_unit: string;
  duration_value: number;
  custom_seconds: number;
  enabled: boolean;
  sort_order: number;
  stripe_price_id: string;
  creem_product_id: string;
  max_purchase_per_user: number;
  upgrade_group: string;
  total_amount: number;
  quota_reset_period: string;
  quota_reset_custom_seconds: number;
  created_at: number;
  updated_at: number;
}

/** Our windows of a plan (quota units; 0 = no such window), and its scope (empty = every model / using group). */
export interface PlanLimits {
  rolling_seconds: number;
  rolling_amount: number;
  daily_amount: number;
  weekly_amount: number;
  monthly_amount: number;
  models: string[];
  groups: string[];
}

/** What the plan routes answer per plan: new-api's `{plan}`, our `limits` beside it (null: new-api's single window). */
export interface PlanView {
  plan: PlanJson;
  limits: PlanLimits | null;
}

const list = (s: string | null) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

function planJson(r: Selectable<SubscriptionPlansTable>): PlanJson {
  return {
    id: r.id,
    title: r.title,
    subtitle: r.subtitle ?? '',
    price_amount: Number(r.price_amount),
    currency: r.currency,
    duration_unit: r.duration_unit,
    duration_value: r.duration_value,
    custom_seconds: r.custom_seconds,
    enabled: !!r.enabled,
    sort_order: r.sort_order ?? 0,
    stripe_price_id: r.stripe_price_id ?? '',
    creem_product_id: r.creem_product_id ?? '',
    max_purchase_per_user: r.max_purchase_per_user ?? 0,
    upgrade_group: r.upgrade_group ?? '',
    total_amount: r.total_amount,
    quota_reset_period: r.quota_reset_period ?? 'never',
    quota_reset_custom_seconds: r.quota_reset_custom_seconds ?? 0,
    created_at: r.created_at ?? 0,
    updated_at: r.updated_at ?? 0,
  };
}

function limitsJson(r: Selectable<SubscriptionPlanLimitsTable>): PlanLimits {
  return {
    rolling_seconds: r.rolling_seconds,
    rolling_amount: r.rolling_amount,
    daily_amount: r.daily_amount,
    weekly_amount: r.weekly_amount,
    monthly_amount: r.monthly_amount,
    models: list(r.models),
    groups: list(r.groups),
  };
}

/** Every plan with its limits, by new-api's order (sort_order desc, id desc); `enabledOnly` for the user's list. */
export async function listPlans(db: Kysely<Database>, enabledOnly = false): Promise<PlanView[]> {
  let q = db.selectFrom('subscription_plans').selectAll();
  if (enabledOnly) q = q.where('enabled', '=', true);
  const rows = await q.orderBy('sort_order', 'desc').orderBy('id', 'desc').execute();
  const limits = await db.selectFrom('subscription_plan_limits').selectAll().execute();
  const byPlan = new Map(limits.map((l) => [l.plan_id, limitsJson(l)]));
  return rows.map((r) => ({ plan: planJson(r), limits: byPlan.get(r.id) ?? null }));
}

// ---- input (zod is loaded on first use: docs/perf/startup-loads.md) ----

/** The request body `{plan, limits?}` checked; a bad one throws UserFacingError and nothing is written. */
export async function parsePlanWrite(ctx: AppContext, body: unknown): Promise<PlanWrite> {
  return (await import('./plan-input.js')).parsePlanWrite(ctx, body);
}

/** PATCH's `{enabled}`: a boolean, else new-api's 参数错误. */
export async function parseEnabled(body: unknown): Promise<boolean> {
  return (await import('./plan-input.js')).parseEnabled(body);
}

export interface PlanWrite {
  plan: Omit<PlanJson, 'id' | 'created_at' | 'updated_at'>;
  /** undefined: leave the stored limits; null: none (new-api's single window) */
  limits: PlanLimits | null | undefined;
}

// ---- writes ----

const nowSec = () => Math.floor(Date.now() / 1000);

async function writeLimits(trx: Kysely<Database>, planId: number, limits: PlanLimits | null): Promise<void> {
  await trx.deleteFrom('subscription_plan_limits').where('plan_id', '=', planId).execute();
  if (!limits) return;
  await trx
    .insertInto('subscription_plan_limits')
    .values({ ...limits, plan_id: planId, models: limits.models.join(','), groups: limits.groups.join(',') })
    .execute();
}

/** Creates a plan (and its limits) and answers it as new-api does: the plan itself. */
export async function createPlan(ctx: AppContext, write: PlanWrite): Promise<PlanJson> {
  const now = nowSec();
  const values = { ...write.plan, created_at: now, updated_at: now };
  const id = await ctx.db.transaction().execute(async (trx) => {
    const planId =
      ctx.dbKind === 'postgres'
        ? (await trx.insertInto('subscription_plans').values(values).returning('id').executeTakeFirstOrThrow()).id
        : Number((await trx.insertInto('subscription_plans').values(values).executeTakeFirstOrThrow()).insertId);
    if (write.limits) await writeLimits(trx, planId, write.limits);
    return planId;
  });
  await plansChanged(ctx);
  return { id: Number(id), ...values };
}

/** Replaces a plan's fields (new-api's full update) and, when given, its limits; false when there is no such plan. */
export async function updatePlan(ctx: AppContext, id: number, write: PlanWrite): Promise<boolean> {
  const found = await ctx.db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('subscription_plans')
      .set({ ...write.plan, updated_at: nowSec() })
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0 && !(await planExists(trx, id))) return false;
    if (write.limits !== undefined) await writeLimits(trx, id, write.limits);
    return true;
  });
  if (found) await plansChanged(ctx);
  return found;
}

/** PATCH: the enabled switch alone; false when there is no such plan. */
export async function setPlanEnabled(ctx: AppContext, id: number, enabled: boolean): Promise<boolean> {
  const r = await ctx.db
    .updateTable('subscription_plans')
    .set({ enabled, updated_at: nowSec() })
    .where('id', '=', id)
    .executeTakeFirst();
  // MySQL counts only changed rows: an unchanged switch on an existing plan is found by a read
  const found = Number(r.numUpdatedRows) > 0 || (await planExists(ctx.db, id));
  if (found) await plansChanged(ctx);
  return found;
}

const planExists = async (db: Kysely<Database>, id: number) =>
  !!(await db.selectFrom('subscription_plans').select('id').where('id', '=', id).executeTakeFirst());

// ---- the plans in memory ----

/** This node's copy of every plan and its limits, reloaded on the `subscriptions` change and every sync period. */
export class PlanCache {
  private byId = new Map<number, PlanView>();
  readonly ready: Promise<void>;
  private readonly stops: Array<() => void> = [];

  constructor(private readonly ctx: AppContext) {
    this.ready = this.reload();
    this.stops.push(
      ctx.changes.subscribe((ev) => {
        if (ev.kind === 'subscriptions') return this.reload();
      }),
    );
    // a node that misses a change (no Redis to carry it) still catches up
    const timer = setInterval(() => void this.reload(), ctx.config.syncFrequencySec * 1000);
    timer.unref();
    this.stops.push(() => clearInterval(timer));
  }

  stop(): void {
    for (const s of this.stops.splice(0)) s();
  }

  async reload(): Promise<void> {
    try {
      const views = await listPlans(this.ctx.db);
      this.byId = new Map(views.map((v) => [v.plan.id, v]));
      this.loaded = true;
    } catch (err) {
      this.ctx.log.warn({ err }, 'subscription plans: reload failed, keeping the previous copy');
    }
  }

  get(id: number): PlanView | undefined {
    return this.byId.get(id);
  }

  /** the first load is done (a site without plans then skips them on every request) */
  loaded = false;

  get size(): number {
    return this.byId.size;
  }
}

const caches = new WeakMap<AppContext, PlanCache>();

/** The instance's plan cache, made on first use and stopped with the context. */
export function planCache(ctx: AppContext): PlanCache {
  let c = caches.get(ctx);
  if (!c) {
    caches.set(ctx, (c = new PlanCache(ctx)));
    const made = c;
    ctx.onClose(() => made.stop());
  }
  return c;
}

/** After a plan write: this node's copy reloads (when it has one), and every other node's on the change. */
async function plansChanged(ctx: AppContext): Promise<void> {
  await ctx.changes.publishSettled({ kind: 'subscriptions' });
}
