// Usage limits in the console (services/limits/; new-api-compat.md §13.3). Ours, beyond new-api:
//   GET  /api/token/limits?ids=1,2     (user)  the limits in force on the caller's tokens, with what they used
//   GET  /api/token/:id/limits         (user)  one of the caller's tokens: its own settings and the limits in force
//   PUT  /api/token/:id/limits         (user)  {rpm, tpm, budget, period, reset}: 0 or absent = no limit of the
//                                              token's own; reset calendar (default) or rolling
//   GET  /api/user/:id/limits          (admin) a user's settings and the limits in force (no token)
//   PUT  /api/user/:id/limits          (admin) the same body; only for users below the caller's role (root: anyone)
// Group defaults are the option UsageLimitGroupDefaults ({group: {rpm, tpm, budget, period, reset}}), set by root;
// the periods' time zone is the option UsageLimitTimeZone (validated in api/option.ts).
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { bodyOf, guarded, idParam, queryOf } from './route-helpers.js';
import { getToken } from '../services/tokens.js';
import { ROLE_ROOT } from '../services/console-auth.js';
import { LimitInputError, parseSettingsInput, usageLimits } from '../services/limits/index.js';

export async function registerLimitRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const limits = () => {
    const l = usageLimits(ctx);
    return l.loaded ? Promise.resolve(l) : l.ready.then(() => l);
  };
  /** settings from the body, or the message of the first bad field */
  const input = (body: Record<string, unknown>) => {
    try {
      return { settings: parseSettingsInput(body) };
    } catch (e) {
      if (e instanceof LimitInputError) return { error: e.message };
      throw e;
    }
  };

  app.get(
    '/api/token/limits',
    { preHandler: auth.user },
    guarded(async (req) => {
      const me = caller(req);
      const ids = (queryOf(req).ids ?? '')
        .split(',')
        .filter((x) => /^\d+$/.test(x))
        .slice(0, 100)
        .map(Number);
      const l = await limits();
      const out: Record<number, unknown> = {};
      for (const id of ids) {
        if (!(await getToken(ctx.db, me.id, id))) continue;
        out[id] = await l.status(id, me.id, me.group);
      }
      return ok(out);
    }),
  );

  app.get(
    '/api/token/:id/limits',
    { preHandler: auth.user },
    guarded(async (req) => {
      const me = caller(req);
      const id = idParam(req);
      if (id === null || !(await getToken(ctx.db, me.id, id))) return fail('令牌不存在');
      const l = await limits();
      return ok({ settings: l.settingsOf('token', id), status: await l.status(id, me.id, me.group) });
    }),
  );

  app.put(
    '/api/token/:id/limits',
    { preHandler: auth.user },
    guarded(async (req) => {
      const me = caller(req);
      const id = idParam(req);
      if (id === null || !(await getToken(ctx.db, me.id, id))) return fail('令牌不存在');
      const { settings, error } = input(bodyOf(req));
      if (!settings) return fail(error);
      const l = await limits();
      await l.save('token', id, settings);
      return ok({ settings: l.settingsOf('token', id), status: await l.status(id, me.id, me.group) });
    }),
  );

  const targetUser = async (id: number | null) =>
    id === null
      ? undefined
      : ctx.db.selectFrom('users').select(['id', 'role', 'group']).where('id', '=', id).executeTakeFirst();

  app.get(
    '/api/user/:id/limits',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const u = await targetUser(idParam(req));
      if (!u) return fail('用户不存在');
      const l = await limits();
      return ok({ settings: l.settingsOf('user', u.id), status: await l.status(0, u.id, u.group) });
    }),
  );

  app.put(
    '/api/user/:id/limits',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const me = caller(req);
      const u = await targetUser(idParam(req));
      if (!u) return fail('用户不存在');
      if (me.role <= u.role && me.role !== ROLE_ROOT) return fail('无权更新同权限等级或更高权限等级的用户信息');
      const { settings, error } = input(bodyOf(req));
      if (!settings) return fail(error);
      const l = await limits();
      await l.save('user', u.id, settings);
      return ok({ settings: l.settingsOf('user', u.id), status: await l.status(0, u.id, u.group) });
    }),
  );
}
