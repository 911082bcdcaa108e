// GET /api/pricing (TryUserAuth, new-api-compat.md §3.4): the public price list. Unlike the other console routes the
// extra fields sit next to `data`: {success, message, data, group_ratio, usable_group}.
// Ours besides new-api's fields: `billing_unit: 'second'` on a per-call priced model that a video platform charges
// per second of video (its ModelPrice × seconds × a size ratio, relay/tasks/submit.ts), so the pricing page can say
// "per second" instead of "per call".
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards } from './auth.js';
import { PricingCatalog } from '../services/pricing/catalog.js';
import { taskAdaptorOf, taskPlatformOf, TASK_PLATFORMS } from '../relay/providers/index.js';

const TYPES_TTL_MS = 60_000;

/**
 * A video model's name on a channel type it shares with chat models (Sora on OpenAI's, Veo on Gemini's, Hailuo on
 * MiniMax's, Wan on Ali's, Seedance on VolcEngine's): those channels' other models stay per call or per token.
 */
const VIDEO_MODEL = /sora|veo|hailuo|seedance|kling|vidu|[ts]2v|i2v/i;

/** Whether a channel type's tasks of this model are charged per second (a per-unit platform serves it there). */
async function perSecondOn(type: number, model: string): Promise<boolean> {
  const own = taskPlatformOf(type);
  if (own) return (await taskAdaptorOf(own)).priceUnits !== undefined;
  if (!VIDEO_MODEL.test(model)) return false;
  for (const platform of TASK_PLATFORMS) {
    const task = await taskAdaptorOf(platform).catch(() => undefined);
    if (task?.priceUnits && task.alsoOnTypes?.includes(type)) return true;
  }
  return false;
}

export async function registerPricingRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const catalog = new PricingCatalog(ctx);
  // the per-second models, scanned at most once a minute and dropped at once when a channel changes (as the catalog)
  let perSecond: { at: number; models: Promise<Set<string>> } | null = null;
  const unsubscribe = ctx.changes.subscribe((ev) => {
    if (ev.kind === 'channels') perSecond = null;
  });
  ctx.onClose(() => {
    unsubscribe();
    catalog.close();
  });
  const scan = async (): Promise<Set<string>> => {
    const rows = await ctx.db
      .selectFrom('abilities')
      .innerJoin('channels', 'channels.id', 'abilities.channel_id')
      .select(['abilities.model as model', 'channels.type as type'])
      .where('abilities.enabled', '=', true)
      .distinct()
      .execute();
    const out = new Set<string>();
    for (const r of rows) if (!out.has(r.model) && (await perSecondOn(Number(r.type), r.model))) out.add(r.model);
    return out;
  };
  const perSecondModels = () => {
    if (!perSecond || Date.now() - perSecond.at >= TYPES_TTL_MS) {
      const models = scan().catch((err: unknown) => {
        perSecond = null; // a failed scan is not kept for the minute
        throw err;
      });
      perSecond = { at: Date.now(), models };
    }
    return perSecond.models;
  };
  app.get('/api/pricing', { preHandler: auth.try }, async (req) => {
    const { data, group_ratio, usable_group } = await catalog.pricing(req.auth?.group ?? '');
    const seconds = await perSecondModels();
    const rows = data.map((r) =>
      r.quota_type === 1 && seconds.has(r.model_name) ? { ...r, billing_unit: 'second' } : r,
    );
    return { success: true, message: '', data: rows, group_ratio, usable_group };
  });
}
