// Console requests (/api) log with their request id on every line: Fastify hands each one `req.log`, a pino child of
// the app's logger bound to `reqId` (the answer's X-Oneapi-Request-Id). Handlers and hooks write through it and pass
// it to the services they call that log (a per-request copy of the AppContext would break the caches kept per
// context). Other requests keep Fastify's silent logger, as before: the relay writes its id on its own lines
// (relay/pipeline/observe.ts), so no child logger is built per relay request.
import type { FastifyServerOptions } from 'fastify';
import type { BaseLogger, Logger } from 'pino';

/** What a service needs to write lines about the request it serves: the request's logger, or the app's. */
export type LineLog = Pick<BaseLogger, 'debug' | 'info' | 'warn' | 'error'>;

/** `/api`, `/api/…` or `/api?…`: a console request. */
export function isConsolePath(url: string): boolean {
  return url.startsWith('/api') && (url.length === 4 || url[4] === '/' || url[4] === '?');
}

/** The path of a URL without its query: query strings may carry secrets (reset tokens, OAuth codes, keys). */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Fastify's childLoggerFactory: console requests get a child of `root` carrying their request id. */
export function consoleRequestLoggers(root: Logger): NonNullable<FastifyServerOptions['childLoggerFactory']> {
  return (silent, bindings, opts, rawReq) =>
    isConsolePath(rawReq.url ?? '') ? (root.child(bindings, opts) as unknown as typeof silent) : silent;
}

/** The logger for a line about this request, carrying its id: its own on /api, else a child of `root` made for it. */
export function requestLog(root: Logger, req: { url: string; id: string; log: LineLog }): LineLog {
  return isConsolePath(req.url) ? req.log : root.child({ reqId: req.id });
}
