// Kysely types of the subscription tables (tables-subscriptions.ts, docs/decisions/0015-subscription-plans.md).
import type { Generated } from 'kysely';
import type { Bool } from './schema.js';

/** new-api's plan; amounts in quota units, times in unix seconds */
export interface SubscriptionPlansTable {
  id: Generated<number>;
  title: string;
  subtitle: Generated<string | null>;
  price_amount: Generated<number>;
  currency: Generated<string>;
  /** year | month | day | hour | custom */
  duration_unit: Generated<string>;
  duration_value: Generated<number>;
  custom_seconds: Generated<number>;
  enabled: Bool;
  sort_order: Generated<number | null>;
  stripe_price_id: Generated<string | null>;
  creem_product_id: Generated<string | null>;
  /** 0 = no limit */
  max_purchase_per_user: Generated<number | null>;
  upgrade_group: Generated<string | null>;
  /** 0 = unlimited */
  total_amount: Generated<number>;
  /** never | daily | weekly | monthly | custom */
  quota_reset_period: Generated<string | null>;
  quota_reset_custom_seconds: Generated<number | null>;
  created_at: number | null;
  updated_at: number | null;
}

export interface SubscriptionOrdersTable {
  id: Generated<number>;
  user_id: number | null;
  plan_id: number | null;
  money: number | null;
  trade_no: string | null;
  payment_method: string | null;
  payment_provider: Generated<string | null>;
  /** pending | success | expired */
  status: string | null;
  create_time: number | null;
  complete_time: number | null;
  provider_payload: string | null;
}

export interface UserSubscriptionsTable {
  id: Generated<number>;
  user_id: number | null;
  plan_id: number | null;
  amount_total: Generated<number>;
  amount_used: Generated<number>;
  start_time: number | null;
  end_time: number | null;
  /** active | expired | cancelled */
  status: string | null;
  /** order | admin */
  source: Generated<string | null>;
  last_reset_time: Generated<number | null>;
  next_reset_time: Generated<number | null>;
  upgrade_group: Generated<string | null>;
  prev_user_group: Generated<string | null>;
  created_at: number | null;
  updated_at: number | null;
}

/** new-api's per-request idempotency record; never written by us, its rows ignored */
export interface SubscriptionPreConsumeRecordsTable {
  id: Generated<number>;
  request_id: string | null;
  user_id: number | null;
  user_subscription_id: number | null;
  pre_consumed: Generated<number>;
  status: string | null;
  created_at: number | null;
  updated_at: number | null;
}

/** ours: a plan's windows (0 = no such window); a plan without a row has new-api's single window */
export interface SubscriptionPlanLimitsTable {
  plan_id: number;
  rolling_seconds: Generated<number>;
  rolling_amount: Generated<number>;
  daily_amount: Generated<number>;
  weekly_amount: Generated<number>;
  monthly_amount: Generated<number>;
  /** comma-separated; empty or null = every model */
  models: string | null;
  /** comma-separated using groups; empty or null = all */
  groups: string | null;
}

/** ours: per window slot its limit (0 = none), use and period end (unix seconds), one row per subscription */
export interface SubscriptionUsageTable {
  user_subscription_id: number;
  user_id: Generated<number>;
  main_limit: Generated<number>;
  main_used: Generated<number>;
  main_end: Generated<number>;
  rolling_limit: Generated<number>;
  rolling_used: Generated<number>;
  rolling_end: Generated<number>;
  daily_limit: Generated<number>;
  daily_used: Generated<number>;
  daily_end: Generated<number>;
  weekly_limit: Generated<number>;
  weekly_used: Generated<number>;
  weekly_end: Generated<number>;
  monthly_limit: Generated<number>;
  monthly_used: Generated<number>;
  monthly_end: Generated<number>;
  rolling_seconds: Generated<number>;
}

/** ours: what a node holds on one window period of a subscription until settlement (crash recovery) */
export interface SubscriptionHoldsTable {
  node: string;
  user_subscription_id: number;
  slot: string;
  period_end: number;
  amount: Generated<number>;
}

export interface SubscriptionTables {
  subscription_plans: SubscriptionPlansTable;
  subscription_orders: SubscriptionOrdersTable;
  user_subscriptions: UserSubscriptionsTable;
  subscription_pre_consume_records: SubscriptionPreConsumeRecordsTable;
  subscription_plan_limits: SubscriptionPlanLimitsTable;
  subscription_usage: SubscriptionUsageTable;
  subscription_holds: SubscriptionHoldsTable;
}
