// GET /api/group/ (admin): every group that has a ratio.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards } from './auth.js';
import { ok } from '../lib/http.js';

export async function registerGroupRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  app.get('/api/group/', { preHandler: auth.admin }, async () =>
    ok(Object.keys(ctx.options.json<Record<string, number>>('GroupRatio', {}))),
  );
}
