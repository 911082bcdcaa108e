// The plan routes' input (services/subscriptions/plans.ts): new-api's checks, defaults and texts in its order, then
// ours on the windows. Its own module so that zod loads with the first plan written, not at start
// (docs/perf/startup-loads.md).
import { z } from 'zod';
import type { AppContext } from '../../context.js';
import { UserFacingError } from '../users.js';
import type { PlanLimits, PlanWrite } from './plans.js';
import { normalizeResetPeriod } from './windows.js';

export const DURATION_UNITS = ['year', 'month', 'day', 'hour', 'custom'] as const;
const PRICE_MAX = 9999;

const int = z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);
const text = (max: number) => z.string().max(max);

/** new-api's fields; the others it sends back from a listed plan (id, created_at, …) are ignored. */
const planSchema = z.object({
  title: text(128).optional().default(''),
  subtitle: text(255).optional().default(''),
  price_amount: z.number().finite().optional().default(0),
  currency: z.string().optional(),
  duration_unit: z.string().optional().default(''),
  duration_value: int.optional().default(0),
  custom_seconds: int.optional().default(0),
  enabled: z.boolean().optional(),
  sort_order: int.optional().default(0),
  stripe_price_id: text(128).optional().default(''),
  creem_product_id: text(128).optional().default(''),
  max_purchase_per_user: int.optional().default(0),
  upgrade_group: text(64).optional().default(''),
  total_amount: int.optional().default(0),
  quota_reset_period: z.string().optional().default(''),
  quota_reset_custom_seconds: int.optional().default(0),
});

const nameList = z
  .array(
    z
      .string()
      .trim()
      .min(1)
      .max(64)
      .regex(/^[^,]+$/),
  )
  .max(1000);

const limitsSchema = z.object({
  rolling_seconds: int.optional().default(0),
  rolling_amount: int.optional().default(0),
  daily_amount: int.optional().default(0),
  weekly_amount: int.optional().default(0),
  monthly_amount: int.optional().default(0),
  models: nameList.optional().default([]),
  groups: nameList.optional().default([]),
});

/** `limits` absent: the plan's windows stay as they are (new-api's console knows nothing of them); null: removed. */
const upsertSchema = z.object({ plan: planSchema, limits: limitsSchema.nullable().optional() });

type PlanInput = z.infer<typeof planSchema>;
type LimitsInput = z.infer<typeof limitsSchema>;

const groupExists = (ctx: AppContext, group: string) =>
  Object.hasOwn(ctx.options.json<Record<string, number>>('GroupRatio', {}), group);

/** new-api's checks and defaults, in its order and with its texts; then ours on the windows. */
function checkPlan(ctx: AppContext, p: PlanInput): PlanWrite['plan'] {
  const title = p.title.trim();
  if (!title) throw new UserFacingError('套餐标题不能为空');
  if (p.price_amount < 0) throw new UserFacingError('价格不能为负数');
  if (p.price_amount > PRICE_MAX) throw new UserFacingError('价格不能超过9999');
  const unit = p.duration_unit || 'month';
  // new-api stores any unit and fails at purchase; its later releases refuse the plan with this text
  if (!(DURATION_UNITS as readonly string[]).includes(unit)) throw new UserFacingError('订阅时长配置无效');
  if (unit === 'custom' && p.custom_seconds <= 0) throw new UserFacingError('订阅时长配置无效');
  if (p.max_purchase_per_user < 0) throw new UserFacingError('购买上限不能为负数');
  if (p.total_amount < 0) throw new UserFacingError('总额度不能为负数');
  const upgradeGroup = p.upgrade_group.trim();
  if (upgradeGroup && !groupExists(ctx, upgradeGroup)) throw new UserFacingError('升级分组不存在');
  const period = normalizeResetPeriod(p.quota_reset_period);
  if (period === 'custom' && p.quota_reset_custom_seconds <= 0) throw new UserFacingError('自定义重置周期需大于0秒');
  if (p.custom_seconds < 0 || p.quota_reset_custom_seconds < 0) throw new UserFacingError('参数错误');
  return {
    title,
    subtitle: p.subtitle,
    // decimal(10,6) in the table
    price_amount: Math.round(p.price_amount * 1e6) / 1e6,
    // new-api sells in USD whatever is sent
    currency: 'USD',
    duration_unit: unit,
    duration_value: p.duration_value <= 0 && unit !== 'custom' ? 1 : p.duration_value,
    custom_seconds: p.custom_seconds,
    enabled: p.enabled ?? true,
    sort_order: p.sort_order,
    stripe_price_id: p.stripe_price_id.trim(),
    creem_product_id: p.creem_product_id.trim(),
    max_purchase_per_user: p.max_purchase_per_user,
    upgrade_group: upgradeGroup,
    total_amount: p.total_amount,
    quota_reset_period: period,
    quota_reset_custom_seconds: p.quota_reset_custom_seconds,
  };
}

function checkLimits(ctx: AppContext, l: LimitsInput): PlanLimits | null {
  const amounts = [l.rolling_seconds, l.rolling_amount, l.daily_amount, l.weekly_amount, l.monthly_amount];
  if (amounts.some((n) => n < 0)) throw new UserFacingError('窗口额度不能为负数');
  if (l.rolling_amount > 0 && l.rolling_seconds <= 0) throw new UserFacingError('滚动窗口需大于0秒');
  const groups = [...new Set(l.groups)];
  if (groups.some((g) => !groupExists(ctx, g))) throw new UserFacingError('分组不存在');
  const limits = {
    // a length without an amount is no window
    rolling_seconds: l.rolling_amount > 0 ? l.rolling_seconds : 0,
    rolling_amount: l.rolling_amount,
    daily_amount: l.daily_amount,
    weekly_amount: l.weekly_amount,
    monthly_amount: l.monthly_amount,
    models: [...new Set(l.models)],
    groups,
  };
  const none = amounts.slice(1).every((n) => n === 0) && !limits.models.length && !limits.groups.length;
  return none ? null : limits;
}

/** The request body `{plan, limits?}` checked; a bad one throws UserFacingError and nothing is written. */
export function parsePlanWrite(ctx: AppContext, body: unknown): PlanWrite {
  const parsed = upsertSchema.safeParse(body);
  if (!parsed.success) throw new UserFacingError('参数错误');
  const plan = checkPlan(ctx, parsed.data.plan);
  const limits =
    parsed.data.limits === undefined ? undefined : parsed.data.limits && checkLimits(ctx, parsed.data.limits);
  return { plan, limits };
}

/** PATCH's `{enabled}`: a boolean, else new-api's 参数错误. */
export function parseEnabled(body: unknown): boolean {
  const parsed = z.object({ enabled: z.boolean() }).safeParse(body);
  if (!parsed.success) throw new UserFacingError('参数错误');
  return parsed.data.enabled;
}
