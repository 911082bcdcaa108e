// Model lists for the console (new-api-compat.md §3.4, §4.10): built-in names per channel type, all known models as
// OpenAI model objects, the enabled models of the abilities index, and the models a user's groups can reach.
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { ok } from '../lib/http.js';
import { CHANNEL_TYPES } from '../services/channel-types.js';
import { enabledModels } from '../services/abilities.js';
import { usableGroups } from '../services/groups.js';
import { builtInModelObjects } from '../services/model-objects.js';

export function builtInModelsByType(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const info of Object.values(CHANNEL_TYPES)) out[String(info.type)] = [...info.models];
  return out;
}

export async function registerModelsRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const route = (path: string, preHandler: typeof auth.user, handler: RouteHandlerMethod) =>
    app.get(path, { preHandler }, handler);

  route('/api/models', auth.user, async () => ok(builtInModelsByType()));
  route('/api/channel/models', auth.admin, async () => ok(builtInModelObjects()));
  route('/api/channel/models_enabled', auth.admin, async () => ok(await enabledModels(ctx.db)));
  route('/api/user/models', auth.user, async (req) => {
    const me = caller(req);
    return ok(await enabledModels(ctx.db, Object.keys(usableGroups(ctx, me.group))));
  });
}
