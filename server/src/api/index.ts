// Console API (/api/*). Each area registers its own routes; handlers stay thin and call services/.
import type { FastifyInstance, RouteOptions, onRequestAsyncHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import { BODY_LIMIT, closeIfRefusedLarge } from '../lib/body-limits.js';
import { isRefusingGuard } from './auth.js';
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
import { registerOAuthRoutes } from './oauth.js';
import { registerCustomOAuthRoutes } from './custom-oauth.js';
import { registerTwoFactorRoutes } from './two-factor.js';
import { registerLoginBindingRoutes } from './login-bindings.js';
import { registerPasskeyRoutes } from './passkeys.js';
import { registerLimitRoutes } from './limits.js';
import { registerTaskLogRoutes } from './task-log.js';
import { registerSubscriptionRoutes } from './subscriptions.js';
import { rejectBadInput } from '../lib/input.js';
import { consoleAccessLine } from './access-log.js';

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
  registerOAuthRoutes,
  registerCustomOAuthRoutes,
  registerTwoFactorRoutes,
  registerLoginBindingRoutes,
  registerPasskeyRoutes,
  registerLimitRoutes,
  registerTaskLogRoutes,
  registerSubscriptionRoutes,
];

type OnRequestHook = Extract<NonNullable<RouteOptions['onRequest']>, unknown[]>[number];

const asList = <T>(hooks: T | T[] | undefined): T[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];

/**
 * A route declared with `{ preHandler: auth.user }` (or admin, root) authenticates once its head is in, before its
 * body is read or parsed: the guard moves to the route's onRequest hooks (after the app's own, the rate limits among
 * them), with the same answers. Only such routes accept bodies up to BODY_LIMIT; the others keep the app's small
 * default (app.ts), their callers being anyone.
 */
function authenticateBeforeBody(route: RouteOptions): void {
  const preHandlers = asList(route.preHandler);
  const guards = preHandlers.filter(isRefusingGuard);
  if (!guards.length) return;
  route.preHandler = preHandlers.filter((hook) => !isRefusingGuard(hook));
  // the guards take (request, reply) and answer through reply: the same in either hook; a refusal with a large body
  // unread closes the connection
  route.onRequest = [
    ...asList(route.onRequest),
    ...(guards.map((guard) =>
      closeIfRefusedLarge(guard as unknown as onRequestAsyncHookHandler),
    ) as unknown as OnRequestHook[]),
  ];
  route.bodyLimit ??= BODY_LIMIT;
}

/**
 * JSON bodies as Fastify parses them (prototype poisoning refused), but an empty one is no body, as new-api's handlers
 * see it: clients send `Content-Type: application/json` on a DELETE or a bodiless POST (new-api's own console does),
 * which Fastify's parser would refuse with a 400.
 */
function acceptEmptyJson(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    parse(req, body as string, done);
  });
}

export async function registerApiRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  acceptEmptyJson(app);
  app.addHook('onRoute', authenticateBeforeBody);
  // every console route (the relay's /api/log/token too) refuses NUL characters and out-of-range numbers first
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') && route.url !== '/api') return;
    const own = route.preValidation;
    route.preValidation = own ? [rejectBadInput, ...(Array.isArray(own) ? own : [own])] : rejectBadInput;
    // per route rather than app-wide: an app-wide onResponse hook would cost every relay request its listeners
    if (ctx.config.observability.consoleAccessLog) route.onResponse = [...asList(route.onResponse), consoleAccessLine];
  });
  for (const area of AREAS) await area(app, ctx);
}
