// Step 6, price: the model's price data for the group (new-api-compat.md §5.1), a charge known up front (images), and
// the local prompt count, made once and only when something asks for it.
import { getPriceData, PricingError } from '../../services/pricing/index.js';
import { RelayError } from '../errors.js';
import type { RelayState } from './state.js';

export function price(s: RelayState): void {
  const { ctx, caller, mode, body, model } = s;
  try {
    s.price = getPriceData(ctx.options, model, s.group, {
      acceptUnsetRatio: caller.user.setting.accept_unset_model_ratio_model === true,
      userId: caller.user.id,
    });
  } catch (e) {
    if (e instanceof PricingError) throw new RelayError(500, e.message, 'new_api_error', 'model_price_error');
    throw e;
  }
  let promptTokens = -1;
  s.prompt = () => (promptTokens >= 0 ? promptTokens : (promptTokens = mode.promptTokens(body, model)));
  s.fixed = mode.fixedQuota ? mode.fixedQuota(s.price, body, model, ctx.options.num('QuotaPerUnit', 500000)) : -1;
}
