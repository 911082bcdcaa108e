// Everything a running instance holds: configuration, databases, options, Redis, logger and the shutdown list.
// Built once at start (and once per test server) and passed explicitly; there are no module-level singletons.
import { pino, type Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Config, DbKind } from './config.js';
import { openDatabase } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import type { Database } from './db/schema.js';
import { OptionStore } from './services/options.js';
import { setRelayErrorLanguage } from './lib/relay-english.js';
import { ChangeBus } from './services/events.js';
import { redisTrouble } from './services/cache/redis-outage.js';

export interface AppContext {
  config: Config;
  db: Kysely<Database>;
  dbKind: DbKind;
  /** The `logs` table's database: LOG_SQL_DSN when set, else the main one. */
  logDb: Kysely<Database>;
  logDbKind: DbKind;
  options: OptionStore;
  redis: Redis | null;
  /** Prefix for every Redis key this instance writes (lets test runs share one Redis). */
  redisPrefix: string;
  /** Publish after writing users, tokens, channels or options; caches subscribe (services/events.ts). */
  changes: ChangeBus;
  log: Logger;
  startTime: number;
  /** Tests only: where Turnstile tokens are verified instead of Cloudflare (a local fake); unset in production. */
  turnstileVerifyUrl?: string;
  /** Registers work to run on shutdown, in reverse order of registration (last registered runs first). */
  onClose(fn: () => Promise<void> | void): void;
  close(): Promise<void>;
}

export interface ContextOptions {
  logger?: Logger;
  redisPrefix?: string;
  /** Tests only: see AppContext.turnstileVerifyUrl */
  turnstileVerifyUrl?: string;
}

export async function createContext(config: Config, opts: ContextOptions = {}): Promise<AppContext> {
  const log = opts.logger ?? pino({ level: config.logLevel });
  const closers: Array<() => Promise<void> | void> = [];
  const onIdleError = (err: Error) => log.warn({ err }, 'database connection lost; it will be replaced');
  const onNamingOff = (err: Error) =>
    log.warn(
      { err },
      'PostgreSQL: named prepared statements failed (a transaction-mode pooler?); running them unnamed from now on',
    );
  const pool = {
    poolSize: config.sqlPool.maxOpen,
    maxIdle: config.sqlPool.maxIdle,
    maxLifetimeSec: config.sqlPool.maxLifetimeSec,
  };
  const main = await openDatabase({
    dsn: config.sqlDsn,
    sqlitePath: config.sqlitePath,
    sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs,
    ...pool,
    onIdleError,
    onNamingOff,
  });
  closers.push(() => main.close());
  try {
    if (config.nodeType === 'master') {
      const applied = await migrateToLatest(main.db, main.kind);
      if (applied.length) log.info({ applied }, 'database migrated');
    }
    let logDb = main;
    if (config.logSqlDsn) {
      logDb = await openDatabase({
        dsn: config.logSqlDsn,
        sqlitePath: config.sqlitePath,
        ...pool,
        onIdleError,
        onNamingOff,
      });
      closers.push(() => logDb.close());
      if (config.nodeType === 'master') await migrateToLatest(logDb.db, logDb.kind);
    }
    const options = new OptionStore(main.db, main.kind);
    await options.load();
    // read on every relay error answer: kept beside the translation table rather than looked up per error
    setRelayErrorLanguage(options.get('RelayErrorLanguage'));
    options.on('change', (key: string, value: string) => {
      if (key === 'RelayErrorLanguage') setRelayErrorLanguage(value);
    });
    options.startSync(config.syncFrequencySec);
    options.on('error', (err) => log.warn({ err }, 'option sync failed'));
    closers.push(() => options.stopSync());

    let redis: Redis | null = null;
    if (config.redisConnString) {
      // Imported only when configured (~20 MB of memory otherwise spent for nothing).
      const { Redis: RedisClient } = await import('ioredis');
      redis = new RedisClient(config.redisConnString, {
        lazyConnect: true,
        maxRetriesPerRequest: 2,
        enableOfflineQueue: true,
      });
      // reconnection attempts and failed commands: logged, throttled (services/cache/redis-outage.ts)
      redis.on('error', (err) => redisTrouble(log, err, 'connection'));
      await redis.connect();
      await redis.ping();
      const r = redis;
      closers.push(async () => {
        await r.quit().catch(() => r.disconnect());
      });
    }

    const redisPrefix = opts.redisPrefix ?? '';
    const changes = new ChangeBus(redis, `${redisPrefix}gateway:changes`);
    await changes.start();
    closers.push(() => changes.stop());
    // Another node saved an option: re-read the table now instead of waiting for the next sync.
    let publishing = false;
    options.on('change', () => {
      if (!publishing) changes.publish({ kind: 'options' });
    });
    changes.subscribe((ev) => {
      if (ev.kind !== 'options' || !redis) return;
      publishing = true;
      options
        .load()
        .catch((err) => log.warn({ err }, 'option reload failed'))
        .finally(() => (publishing = false));
    });

    let closed = false;
    const ctx: AppContext = {
      config,
      db: main.db,
      dbKind: main.kind,
      logDb: logDb.db,
      logDbKind: logDb.kind,
      options,
      redis,
      redisPrefix,
      changes,
      log,
      startTime: Math.floor(Date.now() / 1000),
      turnstileVerifyUrl: opts.turnstileVerifyUrl,
      onClose: (fn) => closers.push(fn),
      async close() {
        if (closed) return;
        closed = true;
        for (const fn of closers.reverse()) {
          try {
            await fn();
          } catch (err) {
            log.warn({ err }, 'error during shutdown');
          }
        }
      },
    };
    return ctx;
  } catch (err) {
    for (const fn of closers.reverse()) await Promise.resolve(fn()).catch(() => undefined);
    throw err;
  }
}
