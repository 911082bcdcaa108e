// A real gateway on 127.0.0.1:<ephemeral> over a fresh database, for integration tests.
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { createContext, type AppContext } from '../../src/context.js';
import { buildApp } from '../../src/app.js';
import { closeGracefully } from '../../src/shutdown.js';
import { createTestDatabase, uniqueName, type TestDbKind, type TestDatabase } from './databases.js';

export interface TestServer {
  url: string;
  ctx: AppContext;
  app: FastifyInstance;
  database: TestDatabase;
  /** stops as SIGTERM does, with `drainMs` for requests in flight (default 0: cut them at once) */
  close(drainMs?: number): Promise<void>;
}

export interface TestServerOptions {
  kind?: TestDbKind;
  /** extra environment variables, as a user would set them */
  env?: Record<string, string>;
  /** reuse an existing database (e.g. to restart over the same data) */
  database?: TestDatabase;
  /** Redis key prefix; give two servers the same one (and the same database) to make them nodes of one deployment */
  redisPrefix?: string;
  /** the instance's logger (default: silent, or TEST_LOG_LEVEL) */
  logger?: Logger;
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const database = opts.database ?? (await createTestDatabase(opts.kind ?? 'sqlite'));
  const config: Config = loadConfig({
    SESSION_SECRET: 'test-secret-0123456789abcdef',
    SQL_DSN: database.dsn,
    SQLITE_PATH: database.sqlitePath || './data/unused.db',
    PORT: '0',
    GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
    GLOBAL_WEB_RATE_LIMIT_ENABLE: 'false',
    WEB_DIST_DIR: '/nonexistent-web-dist',
    ...opts.env,
  });
  const ctx = await createContext(config, {
    logger: opts.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    redisPrefix: opts.redisPrefix ?? uniqueName('gwt') + ':',
  });
  const app = await buildApp(ctx);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  let closed = false;
  return {
    url: address,
    ctx,
    app,
    database,
    async close(drainMs = 0) {
      if (closed) return;
      closed = true;
      await closeGracefully(app, ctx, drainMs);
      if (!opts.database) await database.drop();
    },
  };
}
