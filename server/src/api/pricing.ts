// GET /api/pricing (TryUserAuth, new-api-compat.md §3.4): the public price list. Unlike the other console routes the
// extra fields sit next to `data`: {success, message, data, group_ratio, usable_group}.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards } from './auth.js';
import { PricingCatalog } from '../services/pricing/catalog.js';

export async function registerPricingRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const catalog = new PricingCatalog(ctx);
  ctx.onClose(() => catalog.close());
  app.get('/api/pricing', { preHandler: auth.try }, async (req) => {
    const { data, group_ratio, usable_group } = await catalog.pricing(req.auth?.group ?? '');
    return { success: true, message: '', data, group_ratio, usable_group };
  });
}
