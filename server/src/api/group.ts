import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';

export async function registerGroupRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
