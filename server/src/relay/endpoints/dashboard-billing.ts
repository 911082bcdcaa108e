// OpenAI-style billing for SDKs and dashboards: /dashboard/billing/subscription and /usage (also under /v1), the
// token's or the user's figures as DisplayTokenStatEnabled says.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import type { RelayServices } from '../services.js';
import type { RelayCaller } from '../auth.js';
import { countedAs, getCaller, sendJsonAnswer } from './token-get.js';

export function registerDashboardBilling(app: FastifyInstance, ctx: AppContext, svc: RelayServices): void {
  const amounts = async (caller: RelayCaller) => {
    const display = ctx.options.bool('DisplayTokenStatEnabled');
    let total: number;
    let used: number;
    const token = caller.token!;
    if (display) {
      const row = await ctx.db
        .selectFrom('tokens')
        .select(['remain_quota', 'used_quota'])
        .where('id', '=', token.id)
        .executeTakeFirst();
      used = Number(row?.used_quota ?? 0);
      total = Number(row?.remain_quota ?? 0) + used;
    } else {
      const row = await ctx.db
        .selectFrom('users')
        .select(['quota', 'used_quota'])
        .where('id', '=', caller.user.id)
        .executeTakeFirst();
      used = Number(row?.used_quota ?? 0);
      total = Number(row?.quota ?? 0) + used;
    }
    const currency = ctx.options.bool('DisplayInCurrencyEnabled');
    const perUnit = ctx.options.num('QuotaPerUnit', 500000);
    let amount = currency ? total / perUnit : total;
    if (display && token.unlimited) amount = 100000000;
    // new-api reads the expiry only with the token's figures; the user's figures report no expiry
    return {
      amount,
      usedAmount: currency ? used / perUnit : used,
      expires: display && token.expiredTime > 0 ? token.expiredTime : 0,
    };
  };

  const counted = { onResponse: countedAs(svc, 'billing') };
  for (const prefix of ['', '/v1']) {
    app.get(`${prefix}/dashboard/billing/subscription`, counted, async (req, reply) => {
      const caller = await getCaller(ctx, svc, req, reply);
      if (!caller) return;
      const a = await amounts(caller);
      sendJsonAnswer(req, reply, 200, {
        object: 'billing_subscription',
        has_payment_method: true,
        soft_limit_usd: a.amount,
        hard_limit_usd: a.amount,
        system_hard_limit_usd: a.amount,
        access_until: a.expires,
      });
    });
    app.get(`${prefix}/dashboard/billing/usage`, counted, async (req, reply) => {
      const caller = await getCaller(ctx, svc, req, reply);
      if (!caller) return;
      const a = await amounts(caller);
      sendJsonAnswer(req, reply, 200, { object: 'list', total_usage: a.usedAmount * 100 });
    });
  }
}
