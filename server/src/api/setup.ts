// First-run setup (new-api-compat.md §3.4): GET /api/setup reports the state, POST /api/setup creates the root account
// once and records the usage mode. A `setups` row means "initialised".
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { ROLE_ROOT } from '../services/console-auth.js';
import { nowSec } from '../lib/time.js';
import {
  ROOT_INITIAL_QUOTA,
  UserFacingError,
  insertUser,
  rootUserExists,
  validateUserFields,
} from '../services/users.js';

// Once true it stays true, so the flag is cached; until then every call asks the database (another node may have
// finished setup in the meantime).
const setupDone = new WeakMap<AppContext, true>();

export async function isSetupDone(ctx: AppContext): Promise<boolean> {
  if (setupDone.has(ctx)) return true;
  let done = !!(await ctx.db.selectFrom('setups').select('id').executeTakeFirst());
  // A database from before the wizard existed (one-api, older new-api) has a root but no setups row: like new-api's
  // CheckSetup, record it as initialised instead of sending the operator through the wizard again.
  if (!done && (await rootUserExists(ctx.db))) {
    await ctx.db
      .insertInto('setups')
      .values({ id: 1, version: ctx.config.version, initialized_at: nowSec() })
      .execute()
      .catch(() => undefined); // another node recorded it first
    done = true;
  }
  if (done) setupDone.set(ctx, true);
  return done;
}

function flag(v: unknown): boolean | null {
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false' || v === '') return false;
  return null;
}

class SetupConflict extends Error {}

export async function registerSetupRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get('/api/setup', async () => {
    const status = await isSetupDone(ctx);
    return {
      success: true,
      message: '',
      data: { status, root_init: status ? true : await rootUserExists(ctx.db), database_type: ctx.dbKind },
    };
  });

  // Serialises setup calls within this process; across nodes the `setups` primary key decides (below).
  let queue: Promise<unknown> = Promise.resolve();

  app.post('/api/setup', async (req, reply) => {
    const run = queue.then(() => postSetup(ctx, req, reply));
    queue = run.catch(() => undefined);
    return run;
  });
}

async function postSetup(ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  const rawBody: unknown = req.body;
  const refuse = (status: number, message: string) => reply.status(status).send({ success: false, message });
  if (await isSetupDone(ctx)) return refuse(400, '系统已经初始化完成');
  if (!rawBody || typeof rawBody !== 'object') return refuse(400, '请求参数有误');
  const body = rawBody as Record<string, unknown>;
  const selfUse = flag(body.SelfUseModeEnabled);
  const demo = flag(body.DemoSiteEnabled);
  if (selfUse === null || demo === null) return refuse(400, '请求参数有误');
  const username = typeof body.username === 'string' ? body.username.trim() : '';
  const password = typeof body.password === 'string' ? body.password : '';
  const confirm = typeof body.confirmPassword === 'string' ? body.confirmPassword : '';

  const rootExists = await rootUserExists(ctx.db);
  if (!rootExists) {
    if (!username) return refuse(400, '用户名不能为空');
    if (validateUserFields({ username })) return refuse(400, '用户名长度不能超过12个字符');
    if (password !== confirm) return refuse(400, '两次输入的密码不一致');
    if ([...password].length < 8) return refuse(400, '密码长度至少为8个字符');
  }

  try {
    await ctx.db.transaction().execute(async (trx) => {
      if (await trx.selectFrom('setups').select('id').executeTakeFirst()) throw new SetupConflict();
      // A fixed id: a second node racing this one fails on the primary key instead of creating a second root.
      try {
        await trx
          .insertInto('setups')
          .values({ id: 1, version: ctx.config.version, initialized_at: nowSec() })
          .execute();
      } catch {
        throw new SetupConflict();
      }
      if (!rootExists && !(await rootUserExists(trx))) {
        await insertUser(
          ctx,
          { username, password, display_name: 'Root User', role: ROLE_ROOT, quota: ROOT_INITIAL_QUOTA },
          trx,
        );
      }
    });
  } catch (err) {
    if (err instanceof SetupConflict) {
      setupDone.set(ctx, true);
      return refuse(400, '系统已经初始化完成');
    }
    if (err instanceof UserFacingError) return refuse(400, err.message);
    req.log.error({ err }, 'setup failed');
    return refuse(500, `初始化系统失败: ${(err as Error).message}`);
  }
  setupDone.set(ctx, true);
  try {
    await ctx.options.set('SelfUseModeEnabled', selfUse ? 'true' : 'false');
    // new-api writes the demo flag into SelfUseModeEnabled by mistake; it belongs to DemoSiteEnabled.
    await ctx.options.set('DemoSiteEnabled', demo ? 'true' : 'false');
  } catch (err) {
    req.log.error({ err }, 'saving setup modes failed');
    return refuse(500, `保存运营模式设置失败: ${(err as Error).message}`);
  }
  return reply.send({ success: true, message: '系统初始化成功' });
}
