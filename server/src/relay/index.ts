// The relay (/v1/*, /pg/*, /dashboard/*): token auth, channel selection, provider conversion, billing.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';

export async function registerRelayRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
