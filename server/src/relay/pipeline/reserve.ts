// Step 7, reserve: the quota held for the request (new-api-compat.md §5.2), its amount quoted before the usage limits
// (which count it against a budget), taken atomically in the database (services/billing/). A well-funded caller's
// request goes upstream while its reservation commits; the answer is read only once it stands (`gate`). Everyone else
// waits for the reservation first.
import { isUtf8 } from 'node:buffer';
import type { AppContext } from '../../context.js';
import { QuotaError } from '../../services/billing/index.js';
import { preConsumeQuota, type PriceData } from '../../services/pricing/index.js';
import { zoneOrLocal } from '../../services/limits/periods.js';
import { mayBillPlans, planRoute } from '../../services/subscriptions/active.js';
import type { RelayCaller } from '../auth.js';
import { RelayError } from '../errors.js';
import type { RelayMode } from '../modes/mode.js';
import type { RelayState } from './state.js';

function num(v: unknown): number {
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : 0;
}

/**
 * The amount the request will reserve, computed before the usage limits (limit.ts) so a budget counts it at admission;
 * reserve() then takes it.
 */
export function quote(s: RelayState): void {
  const { ctx, caller, mode, body } = s;
  const maxTokens = mode.maxTokens
    ? mode.maxTokens(body)
    : Math.max(num(body.max_tokens), num(body.max_completion_tokens), num(body.max_output_tokens));
  const { amount, exact } =
    s.fixed >= 0
      ? { amount: s.fixed, exact: null }
      : reservationFor(caller, mode, body, s.raw, s.price, s.prompt, maxTokens, ctx);
  s.reserveAmount = amount;
  s.reserveExact = exact;
}

/**
 * `plans`: the request may bill the user's subscriptions (services/billing/plan-ledger.ts). Off where the charge is
 * given back or grown by a path that knows only the wallet: Midjourney's refunds, a realtime session's turns.
 */
export async function reserve(s: RelayState, plans = true): Promise<void> {
  const { svc, caller, mode } = s;
  const pre = s.reserveAmount;
  const exact = s.reserveExact;
  const forgetCaller = () => {
    // the cached balance that let the request go ahead, or be reserved a bound, was wrong: read it again next time
    void svc.users.forget(caller.user.id);
    if (caller.token) void svc.tokens.invalidate({ key: caller.token.key }).catch(() => undefined);
  };
  // a user with subscriptions may bill one of them (services/billing/plan-ledger.ts); such a reservation is waited for
  const plan =
    plans && mayBillPlans(s.ctx, caller.user)
      ? await planRoute(s.ctx, caller.user, s.model, s.group, zoneOrLocal(s.ctx.options.get('UsageLimitTimeZone')))
      : null;
  const overlapped = !plan && !mode.rawResponse && overlapsReservation(caller, pre);
  const take = (amount: number) =>
    svc.billing.reserve({
      userId: caller.user.id,
      tokenId: caller.token?.id ?? 0,
      tokenKey: caller.token?.key ?? '',
      tokenUnlimited: caller.token?.unlimited ?? true,
      cachedUserQuota: caller.user.quota,
      amount,
      overlapped,
      plan,
    });
  const span = s.trace?.child('reserve', { 'gateway.reserve_amount': pre });
  s.reserving = take(pre)
    .catch((e) => {
      // refused a bound of the prompt: new-api's threshold is the exact count, which may still fit
      if (!exact || !(e instanceof QuotaError)) throw e;
      forgetCaller();
      return take(exact());
    })
    .then(
      (r) => {
        svc.metrics.reservationsHeld++;
        span?.end();
        return (s.reservation = r);
      },
      (e) => {
        if (span) {
          span.fail((e as Error).message);
          span.end();
        }
        throw e instanceof QuotaError ? new RelayError(403, e.message, 'new_api_error', e.code) : e;
      },
    );
  s.gate = overlapped ? s.reserving : null;
  if (!s.gate) await s.reserving;
  else s.gate.catch(forgetCaller);
}

/**
 * new-api's "trusted" threshold (new-api-compat.md §5.2): a cached balance above 100 × the reservation on the user and
 * on a limited token. new-api reserves nothing then and can overdraw; here the reservation is still taken atomically,
 * only no longer waited for before the upstream call. If the database refuses it after all (the cached balance was
 * stale: another node spent it, an admin lowered it), the upstream request is aborted and the caller gets the 403 as if
 * it had been refused first: nothing is charged and nothing of the answer is sent.
 */
function overlapsReservation(caller: RelayCaller, pre: number): boolean {
  if (pre <= 0 || caller.user.quota <= 100 * pre) return false;
  const t = caller.token;
  return !t || t.unlimited || t.remainQuota > 100 * pre;
}

/**
 * The reservation of a token-priced request (new-api-compat.md §5.2): (prompt + max_tokens) × ratios, or
 * PreConsumedQuota without max_tokens. The prompt's exact count means tokenizing it on the event loop, with tables of
 * tens of MB loaded for good. A caller whose cached balance covers 100 × the reservation computed with a bound of the
 * prompt (RelayMode.promptBound) is reserved that instead: the amount held for the duration of the request is larger,
 * the charge (from usage, settled as final − reserved) is the same. Near the limit, where the reservation can be
 * refused, the exact count keeps new-api's threshold. If the database refuses the larger amount (the cached balance was
 * stale), `exact` is reserved instead, so a request is refused only when the exact amount does not fit, and names that.
 */
function reservationFor(
  caller: RelayCaller,
  mode: RelayMode,
  body: Record<string, any>,
  raw: Buffer,
  price: PriceData,
  prompt: () => number,
  maxTokens: number,
  ctx: AppContext,
): { amount: number; exact: (() => number) | null } {
  if (price.usePrice || maxTokens <= 0)
    return { amount: preConsumeQuota(price, 0, maxTokens > 0 ? maxTokens : undefined, ctx.options), exact: null };
  const exact = () => preConsumeQuota(price, prompt(), maxTokens, ctx.options);
  const bound = mode.promptBound && isUtf8(raw) ? mode.promptBound(body, raw.length) : -1;
  if (bound >= 0) {
    const loose = preConsumeQuota(price, bound, maxTokens, ctx.options);
    if (overlapsReservation(caller, loose)) return { amount: loose, exact };
  }
  return { amount: exact(), exact: null };
}
