// GET /api/log/token?key=…: a token's own logs, looked up by its key without any other authentication.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { tokenLogs } from '../../services/log-query.js';

export function registerTokenLog(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/log/token', async (req, reply) => {
    const origin = req.headers.origin;
    reply.header('Access-Control-Allow-Origin', origin || '*').header('Access-Control-Allow-Credentials', 'true');
    const key = String((req.query as Record<string, string>).key ?? '').replace(/^sk-/, '');
    if (!key) return reply.send({ success: false, message: '无效的令牌' });
    const token = await ctx.db.selectFrom('tokens').select('id').where('key', '=', key).executeTakeFirst();
    if (!token) return reply.send({ success: false, message: '无效的令牌' });
    const data = await tokenLogs(ctx, token.id);
    return reply.send({ success: true, message: '', data });
  });
}
