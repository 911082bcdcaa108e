// One info line per console request (CONSOLE_ACCESS_LOG, default on), written through the request's logger so it
// carries the request's id like its other lines (lib/request-log.ts). The path only: query strings may carry secrets,
// and no header (Authorization, cookies) or body is logged.
import type { onResponseAsyncHookHandler } from 'fastify';
import { pathOf } from '../lib/request-log.js';

export const consoleAccessLine: onResponseAsyncHookHandler = async (req, reply) => {
  req.log.info(
    {
      method: req.method,
      url: pathOf(req.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
      userId: req.auth?.id,
    },
    'console request',
  );
};
