// Process entry: configuration, database, HTTP server, graceful shutdown (SIGTERM/SIGINT flush pending work).
import { ConfigError, loadConfig, loadDotEnv, redactDsn, withPersistedSessionSecret } from './config.js';
import { createContext } from './context.js';
import { buildApp } from './app.js';
import { closeGracefully } from './shutdown.js';

async function main(): Promise<void> {
  loadDotEnv();
  let config;
  try {
    config = withPersistedSessionSecret(loadConfig());
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const ctx = await createContext(config).catch((err: Error) => {
    console.error(`cannot start: ${err.message}${config.sqlDsn ? ` (SQL_DSN ${redactDsn(config.sqlDsn)})` : ''}`);
    process.exit(1);
  });
  if (config.sessionSecretGenerated) {
    ctx.log.warn('SESSION_SECRET is not set: sessions will not survive a restart or work across several nodes');
  }
  const app = await buildApp(ctx);
  const address = await app.listen({ port: config.port, host: '0.0.0.0' });
  ctx.log.info({ address, db: ctx.dbKind, redis: !!ctx.redis }, `listening on ${address}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info({ signal }, 'shutting down');
    // the final flushes get 15 s after the drain
    const force = setTimeout(() => process.exit(1), config.shutdownTimeoutSec * 1000 + 15_000);
    force.unref();
    await closeGracefully(app, ctx, config.shutdownTimeoutSec * 1000);
    process.exit(0);
  };
  // A rejection nobody handled is a bug in one request's path. Ending the process for it would drop every other
  // request in flight and the settlement deltas and log rows still queued: log it loudly and keep serving.
  process.on('unhandledRejection', (err) => ctx.log.error({ err }, 'unhandled promise rejection'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
