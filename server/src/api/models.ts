// Model lists for the console (facts §3.4, §4.10): built-in names per channel type, all known models as OpenAI
// model objects, the enabled models of the abilities index, and the models a user's groups can reach.
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { ok } from '../lib/http.js';
import { CHANNEL_TYPES } from '../services/channel-types.js';
import { enabledModels } from '../services/abilities.js';
import { usableGroups } from '../services/groups.js';

/** new-api's fixed `created` for model objects. */
const MODEL_CREATED = 1626777600;

export function builtInModelsByType(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const info of Object.values(CHANNEL_TYPES)) out[String(info.type)] = [...info.models];
  return out;
}

export function builtInModelObjects() {
  const seen = new Set<string>();
  const list: Array<{ id: string; object: 'model'; created: number; owned_by: string; root: string; parent: null }> = [];
  for (const info of Object.values(CHANNEL_TYPES)) {
    for (const id of info.models) {
      if (seen.has(id)) continue;
      seen.add(id);
      list.push({ id, object: 'model', created: MODEL_CREATED, owned_by: info.name, root: id, parent: null });
    }
  }
  return list;
}

export async function registerModelsRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const both = (path: string, preHandler: typeof auth.user, handler: RouteHandlerMethod) => {
    app.get(path, { preHandler }, handler);
    app.get(path + '/', { preHandler }, handler);
  };

  both('/api/models', auth.user, async () => ok(builtInModelsByType()));
  both('/api/channel/models', auth.admin, async () => ok(builtInModelObjects()));
  both('/api/channel/models_enabled', auth.admin, async () => ok(await enabledModels(ctx.db)));
  both('/api/user/models', auth.user, async (req) => {
    const me = caller(req);
    return ok(await enabledModels(ctx.db, Object.keys(usableGroups(ctx, me.group))));
  });
}
