import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';

export async function registerLogRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
