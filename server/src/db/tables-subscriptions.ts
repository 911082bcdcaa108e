// Subscription plans (docs/decisions/0015-subscription-plans.md): new-api's four tables with gorm's column and index
// names, so that either product reads what the other wrote, and the three of ours that new-api ignores (windows per
// plan, the usage of each bought subscription, the holds a node keeps on it until settlement).
import { c, id, ix, ux, type TableSpec } from './table-spec.js';

export const SUBSCRIPTION_TABLES: TableSpec[] = [
  {
    name: 'subscription_plans',
    columns: [
      id,
      c('title', 'varchar(128)', undefined, true),
      c('subtitle', 'varchar(255)', '', false),
      // decimal(10,6) in new-api's later releases (double before); read back as a number on every driver
      c('price_amount', 'decimal(10,6)', 0),
      c('currency', 'varchar(8)', 'USD'),
      c('duration_unit', 'varchar(16)', 'month'),
      c('duration_value', 'bigint', 1),
      c('custom_seconds', 'bigint', 0),
      c('enabled', 'bool', true, false),
      c('sort_order', 'bigint', 0, false),
      c('stripe_price_id', 'varchar(128)', '', false),
      c('creem_product_id', 'varchar(128)', '', false),
      c('max_purchase_per_user', 'bigint', 0, false),
      c('upgrade_group', 'varchar(64)', '', false),
      c('total_amount', 'bigint', 0),
      c('quota_reset_period', 'varchar(16)', 'never', false),
      c('quota_reset_custom_seconds', 'bigint', 0, false),
      c('created_at', 'bigint'),
      c('updated_at', 'bigint'),
    ],
    indexes: [],
  },
  {
    name: 'subscription_orders',
    columns: [
      id,
      c('user_id', 'bigint'),
      c('plan_id', 'bigint'),
      c('money', 'float'),
      c('trade_no', 'varchar(255)'),
      c('payment_method', 'varchar(50)'),
      c('payment_provider', 'varchar(50)', '', false),
      c('status', 'text'),
      c('create_time', 'bigint'),
      c('complete_time', 'bigint'),
      c('provider_payload', 'text'),
    ],
    // gorm's `unique;index`: its index plus a unique one (ours named as users.username's)
    indexes: [
      ix('subscription_orders', 'user_id'),
      ix('subscription_orders', 'plan_id'),
      ix('subscription_orders', 'trade_no'),
      ux('subscription_orders', 'trade_no'),
    ],
  },
  {
    name: 'user_subscriptions',
    columns: [
      id,
      c('user_id', 'bigint'),
      c('plan_id', 'bigint'),
      c('amount_total', 'bigint', 0),
      c('amount_used', 'bigint', 0),
      c('start_time', 'bigint'),
      c('end_time', 'bigint'),
      c('status', 'varchar(32)'),
      c('source', 'varchar(32)', 'order', false),
      c('last_reset_time', 'bigint', 0, false),
      c('next_reset_time', 'bigint', 0, false),
      c('upgrade_group', 'varchar(64)', '', false),
      c('prev_user_group', 'varchar(64)', '', false),
      c('created_at', 'bigint'),
      c('updated_at', 'bigint'),
    ],
    indexes: [
      ix('user_subscriptions', 'user_id'),
      { name: 'idx_user_sub_active', columns: ['user_id', 'status', 'end_time'] },
      ix('user_subscriptions', 'plan_id'),
      ix('user_subscriptions', 'end_time'),
      ix('user_subscriptions', 'status'),
      ix('user_subscriptions', 'next_reset_time'),
    ],
  },
  {
    // new-api's idempotency record per request; we never write it (our holds do that job) and ignore its rows
    name: 'subscription_pre_consume_records',
    columns: [
      id,
      c('request_id', 'varchar(64)'),
      c('user_id', 'bigint'),
      c('user_subscription_id', 'bigint'),
      c('pre_consumed', 'bigint', 0),
      c('status', 'varchar(32)'),
      c('created_at', 'bigint'),
      c('updated_at', 'bigint'),
    ],
    indexes: [
      { name: 'idx_subscription_pre_consume_records_request_id', columns: ['request_id'], unique: true },
      ix('subscription_pre_consume_records', 'user_id'),
      ix('subscription_pre_consume_records', 'user_subscription_id'),
      ix('subscription_pre_consume_records', 'status'),
      ix('subscription_pre_consume_records', 'updated_at'),
    ],
  },
  // Ours: a plan's windows beside new-api's single one (amounts in quota units, 0 = no such window); a plan without
  // a row is new-api's. models and groups: comma-separated, empty = every model / every using group.
  {
    name: 'subscription_plan_limits',
    columns: [
      c('plan_id', 'bigint', undefined, true),
      c('rolling_seconds', 'bigint', 0),
      c('rolling_amount', 'bigint', 0),
      c('daily_amount', 'bigint', 0),
      c('weekly_amount', 'bigint', 0),
      c('monthly_amount', 'bigint', 0),
      c('models', 'text'),
      c('groups', 'text'),
    ],
    primaryKey: ['plan_id'],
    indexes: [],
  },
  // Ours: one wide row per bought subscription, every window's limit (snapshot at purchase), use and period end, so
  // that a reservation against all of them is one conditional UPDATE of one row (services/subscriptions/windows.ts)
  {
    name: 'subscription_usage',
    columns: [
      c('user_subscription_id', 'bigint', undefined, true),
      c('user_id', 'bigint', 0),
      ...['main', 'rolling', 'daily', 'weekly', 'monthly'].flatMap((slot) => [
        c(`${slot}_limit`, 'bigint', 0),
        c(`${slot}_used`, 'bigint', 0),
        c(`${slot}_end`, 'bigint', 0),
      ]),
      // the rolling window's length as bought (0: the plan's, for rows written before it was kept)
      c('rolling_seconds', 'bigint', 0),
    ],
    primaryKey: ['user_subscription_id'],
    indexes: [ix('subscription_usage', 'user_id')],
  },
  // Ours: what each node holds on a subscription's window until settlement (crash recovery, as quota_holds); the
  // period's end is part of the key so that a dead node's hold is never given back into a later period
  {
    name: 'subscription_holds',
    columns: [
      c('node', 'varchar(64)', undefined, true),
      c('user_subscription_id', 'bigint', undefined, true),
      c('slot', 'varchar(16)', undefined, true),
      c('period_end', 'bigint', undefined, true),
      c('amount', 'bigint', 0),
    ],
    primaryKey: ['node', 'user_subscription_id', 'slot', 'period_end'],
    indexes: [],
  },
];
