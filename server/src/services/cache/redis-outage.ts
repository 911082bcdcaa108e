// A Redis that stops answering must not stop the relay: the token and user caches read the database instead, the
// model rate limit lets requests through (as the per-IP limits do: lib/rate-limit.ts), and all of them say so in the
// log at most once per WARN_EVERY_MS rather than once per request.
//
// A client that is not connected (ioredis reconnecting) is not asked at all: its commands would wait in the offline
// queue for two reconnection attempts first. Entries a change could not delete meanwhile are deleted once the client
// is back (clearAfterOutage).
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

const WARN_EVERY_MS = 10_000;
const lastWarned = new WeakMap<object, number>();

/**
 * Asks Redis, when the client is connected: undefined while it is not, or when the command fails (logged), and the
 * caller goes on without it (the database, or letting the request through).
 */
export async function redisAsk<T>(
  redis: Redis,
  log: Logger,
  doing: string,
  ask: (redis: Redis) => Promise<T>,
): Promise<T | undefined> {
  if (redis.status !== 'ready') return undefined;
  try {
    return await ask(redis);
  } catch (err) {
    redisTrouble(log, err, doing);
    return undefined;
  }
}

/** Logs a Redis failure, at most once per WARN_EVERY_MS for each logger. */
export function redisTrouble(log: Logger, err: unknown, doing: string): void {
  const now = Date.now();
  if (now - (lastWarned.get(log) ?? 0) < WARN_EVERY_MS) return;
  lastWarned.set(log, now);
  log.warn({ err }, `Redis unavailable (${doing}); going on without it`);
}

/**
 * Once the client is connected again after an outage, deletes the keys matching `patterns`: entries that a change
 * could not delete meanwhile (a token disabled, a user banned) would otherwise be served until their TTL ran out.
 */
export function clearAfterOutage(redis: Redis, patterns: string[], log: Logger): void {
  let lost = false;
  redis.on('reconnecting', () => {
    lost = true;
  });
  redis.on('ready', () => {
    if (!lost) return;
    lost = false;
    void (async () => {
      for (const match of patterns) {
        for await (const keys of redis.scanStream({ match, count: 500 })) {
          if ((keys as string[]).length) await redis.unlink(...(keys as string[]));
        }
      }
      log.info('Redis is back; the token and user caches start over');
    })().catch((err) => redisTrouble(log, err, 'clearing the caches after an outage'));
  });
}
