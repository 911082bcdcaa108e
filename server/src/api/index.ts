// Console API (/api/*). Each area registers its own routes; handlers stay thin and call services/.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { registerSetupRoutes } from './setup.js';
import { registerStatusRoutes } from './status.js';
import { registerOptionRoutes } from './option.js';
import { registerUserRoutes } from './user.js';
import { registerGroupRoutes } from './group.js';
import { registerChannelRoutes } from './channel.js';
import { registerTokenRoutes } from './token.js';
import { registerLogRoutes } from './log.js';
import { registerDataRoutes } from './data.js';
import { registerModelsRoutes } from './models.js';
import { registerChannelTestRoutes } from './channel-test.js';
import { registerPricingRoutes } from './pricing.js';
import { registerRedemptionRoutes } from './redemption.js';
import { registerTopupRoutes } from './topup.js';
import { rejectBadInput } from '../lib/input.js';

type Area = (app: FastifyInstance, ctx: AppContext) => Promise<void> | void;

const AREAS: Area[] = [
  registerSetupRoutes,
  registerStatusRoutes,
  registerOptionRoutes,
  registerUserRoutes,
  registerGroupRoutes,
  registerChannelRoutes,
  registerTokenRoutes,
  registerLogRoutes,
  registerDataRoutes,
  registerModelsRoutes,
  registerChannelTestRoutes,
  registerPricingRoutes,
  registerRedemptionRoutes,
  registerTopupRoutes,
];

export async function registerApiRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // every console route (the relay's /api/log/token too) refuses NUL characters and out-of-range numbers first
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') && route.url !== '/api') return;
    const own = route.preValidation;
    route.preValidation = own ? [rejectBadInput, ...(Array.isArray(own) ? own : [own])] : rejectBadInput;
  });
  for (const area of AREAS) await area(app, ctx);
}
