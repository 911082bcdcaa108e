// Process configuration from the environment, with new-api's variable names and defaults
// (new-api-compat.md §1.3) so existing deployments keep their .env files.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { isIpEntry } from './lib/ip-match.js';
import { ensurePrivateDir, tightenFile } from './lib/private-files.js';

export type DbKind = 'sqlite' | 'postgres' | 'mysql';

export interface Config {
  port: number;
  sqlDsn: string;
  sqlitePath: string;
  sqliteBusyTimeoutMs: number;
  logSqlDsn: string;
  /** PostgreSQL / MySQL connection pool (new-api's SQL_MAX_OPEN_CONNS, SQL_MAX_IDLE_CONNS, SQL_MAX_LIFETIME) */
  sqlPool: SqlPoolConfig;
  redisConnString: string;
  sessionSecret: string;
  sessionSecretGenerated: boolean;
  /** SESSION_COOKIE_SECURE: the session cookie is always Secure (otherwise only on requests that came over HTTPS) */
  sessionCookieSecure: boolean;
  cryptoSecret: string;
  syncFrequencySec: number;
  nodeType: 'master' | 'slave';
  frontendBaseUrl: string;
  streamingTimeoutSec: number;
  relayTimeoutSec: number;
  /**
   * TRUSTED_PROXIES: the addresses / CIDR ranges whose X-Forwarded-For is believed; empty: loopback and private
   * networks (lib/ip-match.ts DEFAULT_TRUSTED_PROXIES); `*`: every hop (new-api)
   */
  trustedProxies: string[];
  /** SIGTERM / SIGINT: seconds requests in flight may take to finish before their connections are cut (shutdown.ts) */
  shutdownTimeoutSec: number;
  /** LEAN_HTTP: the relay's hot routes served by the lean HTTP front (lib/lean-http/); false: Node's server for all */
  leanHttp: boolean;
  forceStreamOption: boolean;
  channelTestFrequencyMin: number;
  /** an asynchronous task unfinished this long after its submission fails and is refunded; 0 = never */
  taskTimeoutMinutes: number;
  /**
   * TASK_PRICE_PATCH: models whose tasks are charged per call (ModelPrice once) however the platform would multiply
   * the price (seconds, size, resolution), as new-api's list of the same name
   */
  taskPricePatch: string[];
  /** TASK_POLL_INTERVAL: seconds between two ticks of the task poller (default 15, as new-api's fixed interval) */
  taskPollIntervalSec: number;
  channelUpdateFrequencyMin: number;
  pollingIntervalSec: number;
  batchUpdateEnabled: boolean;
  batchUpdateIntervalSec: number;
  generateDefaultToken: boolean;
  azureDefaultApiVersion: string;
  /** VERTEX_TOKEN_URL: where Vertex AI service-account grants go (default Google's; a private endpoint or a test) */
  vertexTokenUrl: string;
  /** STRIPE_API_URL: where Stripe API calls go (default Stripe's own; a test points it at a local mock) */
  stripeApiUrl: string;
  /** CREEM_API_URL: where Creem API calls go (default Creem's, or its test API with CreemTestMode; a test's mock) */
  creemApiUrl: string;
  /**
   * OAUTH_ENDPOINTS_JSON: replaces the fixed token and user-info addresses of GitHub, Linux DO and Discord, e.g.
   * `{"github":{"token":"...","user":"..."}}` (a private mirror or a test's mock provider); missing ones keep the vendor's
   */
  oauthEndpoints: OAuthEndpointOverrides;
  globalApiRateLimit: { enabled: boolean; count: number; durationSec: number };
  globalWebRateLimit: { enabled: boolean; count: number; durationSec: number };
  criticalRateLimit: { enabled: boolean; count: number; durationSec: number };
  /** Observability (services/metrics.ts, services/tracing.ts, api/ops.ts) */
  observability: ObservabilityConfig;
  debug: boolean;
  logLevel: string;
  webDistDir: string;
  version: string;
}

export interface ObservabilityConfig {
  /** METRICS_TOKEN: when set, GET /metrics wants `Authorization: Bearer <token>` */
  metricsToken: string;
  /** METRICS_ALLOW_PUBLIC: /metrics answers any address, not only loopback and private ones */
  metricsAllowPublic: boolean;
  /** RELAY_ACCESS_LOG: one info line per relay request (default true) */
  relayAccessLog: boolean;
  /** CONSOLE_ACCESS_LOG: one info line per console (/api) request (default true) */
  consoleAccessLog: boolean;
  /** where spans go (OTLP/HTTP): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; empty: no tracing */
  otlpTracesUrl: string;
  /** OTEL_SERVICE_NAME (default ai-gateway) */
  serviceName: string;
}

export type OAuthVendor = 'github' | 'linuxdo' | 'discord';
export type OAuthEndpointOverrides = Partial<Record<OAuthVendor, { token?: string; user?: string }>>;

export interface SqlPoolConfig {
  maxOpen: number;
  /** MySQL: connections kept open while idle */
  maxIdle: number;
  /** PostgreSQL: seconds after which a connection is closed and replaced (0: never) */
  maxLifetimeSec: number;
}

/**
 * Connections per process. new-api's default is 1,000 open and 100 idle (Go's database/sql, many goroutines); one
 * event loop gains nothing from that many, and every PostgreSQL connection is a server process, so the default here is
 * 20. Set SQL_MAX_OPEN_CONNS to change it.
 */
const DEFAULT_MAX_OPEN = 20;

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, def: number, min = Number.MIN_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min) throw new ConfigError(`${name} must be >= ${min}, got ${n}`);
  return n;
}

function ipList(env: Env, name: string, anyEntry = false): string[] {
  const items = (env[name] ?? '').split(/[\s,]+/).filter(Boolean);
  if (anyEntry && items.length === 1 && items[0] === '*') return items;
  for (const item of items)
    if (!isIpEntry(item)) throw new ConfigError(`${name}: "${item}" is not an IP address or CIDR range`);
  return items;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** Which database a DSN selects, following new-api's chooseDB (new-api-compat.md §1.4). */
export function dbKindOf(dsn: string): DbKind {
  if (!dsn || dsn.startsWith('local')) return 'sqlite';
  if (dsn.startsWith('postgres://') || dsn.startsWith('postgresql://')) return 'postgres';
  return 'mysql';
}

/** Loads `.env` from the working directory when present; real environment variables win. */
export function loadDotEnv(path = '.env'): void {
  if (!existsSync(path)) return;
  const loader = (process as unknown as { loadEnvFile?: (p: string) => void }).loadEnvFile;
  if (loader) {
    const before = { ...process.env };
    loader(path);
    for (const [k, v] of Object.entries(before)) process.env[k] = v;
  }
}

/**
 * Example secrets that documentation and the compose set ship (new-api's docs and deploy/env.example): a gateway
 * started with one of them has a secret everybody knows, so it refuses to start rather than run like that.
 */
const PLACEHOLDER_SECRETS = [
  'random_string',
  'change-me-to-a-long-random-secret',
  'change-me-to-a-long-random-password',
] as const;

function refusePlaceholderSecrets(env: Env): void {
  for (const name of ['SESSION_SECRET', 'CRYPTO_SECRET'] as const) {
    const value = env[name]?.trim() ?? '';
    if ((PLACEHOLDER_SECRETS as readonly string[]).includes(value))
      throw new ConfigError(`${name} is set to the example value "${value}"; set it to a long random secret`);
  }
  // the compose set's database password travels inside the DSNs
  for (const name of ['SQL_DSN', 'LOG_SQL_DSN', 'REDIS_CONN_STRING'] as const) {
    const value = env[name] ?? '';
    const placeholder = PLACEHOLDER_SECRETS.find((p) => value.includes(p));
    if (placeholder)
      throw new ConfigError(
        `${name} holds the example password "${placeholder}"; set POSTGRES_PASSWORD (deploy/.env) to a long random password`,
      );
  }
}

export function loadConfig(env: Env = process.env): Config {
  refusePlaceholderSecrets(env);
  const sessionSecretRaw = env.SESSION_SECRET?.trim() ?? '';
  const sessionSecret = sessionSecretRaw || randomUUID();
  const nodeType = (env.NODE_TYPE?.trim() || 'master').toLowerCase();
  if (nodeType !== 'master' && nodeType !== 'slave') {
    throw new ConfigError(`NODE_TYPE must be master or slave, got "${env.NODE_TYPE}"`);
  }
  const sqlDsn = env.SQL_DSN?.trim() ?? '';
  if (sqlDsn && dbKindOf(sqlDsn) === 'mysql' && !/@tcp\(|^mysql:\/\/|@unix\(|^[^@]+@\//.test(sqlDsn)) {
    throw new ConfigError(
      `SQL_DSN "${redactDsn(sqlDsn)}" is not a PostgreSQL URL (postgres://...), a MySQL DSN (user:pass@tcp(host:port)/db or mysql://...) or "local"`,
    );
  }
  const logSqlDsn = env.LOG_SQL_DSN?.trim() ?? '';
  const redis = env.REDIS_CONN_STRING?.trim() ?? '';
  if (redis && !/^rediss?:\/\//.test(redis)) {
    throw new ConfigError(`REDIS_CONN_STRING must be a redis:// or rediss:// URL`);
  }
  const rawSqlite = env.SQLITE_PATH?.trim() || './data/one-api.db';
  const [sqliteFile, sqliteQuery] = rawSqlite.split('?', 2);
  const busy = /(?:^|&)_busy_timeout=(\d+)/.exec(sqliteQuery ?? '');
  return {
    port: int(env, 'PORT', 3000, 0),
    sqlDsn,
    sqlitePath: sqliteFile,
    sqliteBusyTimeoutMs: busy ? Number(busy[1]) : int(env, 'SQLITE_BUSY_TIMEOUT', 30000, 0),
    logSqlDsn,
    sqlPool: sqlPoolOf(env),
    redisConnString: redis,
    sessionSecret,
    sessionSecretGenerated: !sessionSecretRaw,
    sessionCookieSecure: bool(env, 'SESSION_COOKIE_SECURE', false),
    cryptoSecret: env.CRYPTO_SECRET?.trim() || sessionSecret,
    syncFrequencySec: int(env, 'SYNC_FREQUENCY', 60, 1),
    nodeType: nodeType as 'master' | 'slave',
    frontendBaseUrl: env.FRONTEND_BASE_URL?.trim() ?? '',
    streamingTimeoutSec: int(env, 'STREAMING_TIMEOUT', 60, 1),
    relayTimeoutSec: int(env, 'RELAY_TIMEOUT', 0, 0),
    shutdownTimeoutSec: int(env, 'SHUTDOWN_TIMEOUT', 8, 0),
    trustedProxies: ipList(env, 'TRUSTED_PROXIES', true),
    leanHttp: bool(env, 'LEAN_HTTP', true),
    forceStreamOption: bool(env, 'FORCE_STREAM_OPTION', true),
    channelTestFrequencyMin: int(env, 'CHANNEL_TEST_FREQUENCY', 0, 0),
    taskTimeoutMinutes: int(env, 'TASK_TIMEOUT_MINUTES', 1440, 0),
    taskPricePatch: (env.TASK_PRICE_PATCH ?? '')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean),
    taskPollIntervalSec: int(env, 'TASK_POLL_INTERVAL', 15, 1),
    channelUpdateFrequencyMin: int(env, 'CHANNEL_UPDATE_FREQUENCY', 0, 0),
    pollingIntervalSec: int(env, 'POLLING_INTERVAL', 0, 0),
    batchUpdateEnabled: bool(env, 'BATCH_UPDATE_ENABLED', false),
    batchUpdateIntervalSec: int(env, 'BATCH_UPDATE_INTERVAL', 5, 1),
    generateDefaultToken: bool(env, 'GENERATE_DEFAULT_TOKEN', false),
    azureDefaultApiVersion: env.AZURE_DEFAULT_API_VERSION?.trim() || '2025-04-01-preview',
    vertexTokenUrl: env.VERTEX_TOKEN_URL?.trim() || '',
    stripeApiUrl: env.STRIPE_API_URL?.trim() || '',
    creemApiUrl: env.CREEM_API_URL?.trim() || '',
    oauthEndpoints: oauthEndpointsOf(env),
    globalApiRateLimit: {
      enabled: bool(env, 'GLOBAL_API_RATE_LIMIT_ENABLE', true),
      count: int(env, 'GLOBAL_API_RATE_LIMIT', 180, 1),
      durationSec: int(env, 'GLOBAL_API_RATE_LIMIT_DURATION', 180, 1),
    },
    globalWebRateLimit: {
      enabled: bool(env, 'GLOBAL_WEB_RATE_LIMIT_ENABLE', true),
      count: int(env, 'GLOBAL_WEB_RATE_LIMIT', 60, 1),
      durationSec: int(env, 'GLOBAL_WEB_RATE_LIMIT_DURATION', 180, 1),
    },
    criticalRateLimit: {
      enabled: bool(env, 'CRITICAL_RATE_LIMIT_ENABLE', true),
      count: int(env, 'CRITICAL_RATE_LIMIT', 20, 1),
      durationSec: int(env, 'CRITICAL_RATE_LIMIT_DURATION', 1200, 1),
    },
    observability: observabilityOf(env),
    debug: bool(env, 'DEBUG', false),
    logLevel: env.LOG_LEVEL?.trim() || (bool(env, 'DEBUG', false) ? 'debug' : 'info'),
    webDistDir: env.WEB_DIST_DIR?.trim() ?? '',
    version: env.VERSION?.trim() || 'v0.1.0',
  };
}

function observabilityOf(env: Env): ObservabilityConfig {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ?? '';
  const traces =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || (base ? base.replace(/\/+$/, '') + '/v1/traces' : '');
  if (traces && !/^https?:\/\//.test(traces))
    throw new ConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL, got "${traces}"`);
  return {
    metricsToken: env.METRICS_TOKEN?.trim() ?? '',
    metricsAllowPublic: bool(env, 'METRICS_ALLOW_PUBLIC', false),
    relayAccessLog: bool(env, 'RELAY_ACCESS_LOG', true),
    consoleAccessLog: bool(env, 'CONSOLE_ACCESS_LOG', true),
    otlpTracesUrl: traces,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'ai-gateway',
  };
}

const OAUTH_VENDORS: readonly OAuthVendor[] = ['github', 'linuxdo', 'discord'];

function oauthEndpointsOf(env: Env): OAuthEndpointOverrides {
  const raw = env.OAUTH_ENDPOINTS_JSON?.trim();
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('OAUTH_ENDPOINTS_JSON is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError('OAUTH_ENDPOINTS_JSON must be an object keyed by github, linuxdo or discord');
  const out: OAuthEndpointOverrides = {};
  for (const [vendor, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (!OAUTH_VENDORS.includes(vendor as OAuthVendor))
      throw new ConfigError(`OAUTH_ENDPOINTS_JSON: unknown provider "${vendor}"`);
    const entry: { token?: string; user?: string } = {};
    for (const field of ['token', 'user'] as const) {
      const url = (value as Record<string, unknown> | null)?.[field];
      if (url === undefined) continue;
      if (typeof url !== 'string' || !/^https?:\/\//.test(url))
        throw new ConfigError(`OAUTH_ENDPOINTS_JSON: ${vendor}.${field} must be an http(s) URL`);
      entry[field] = url;
    }
    out[vendor as OAuthVendor] = entry;
  }
  return out;
}

function sqlPoolOf(env: Env): SqlPoolConfig {
  const maxOpen = int(env, 'SQL_MAX_OPEN_CONNS', DEFAULT_MAX_OPEN, 1);
  return {
    maxOpen,
    maxIdle: Math.min(maxOpen, int(env, 'SQL_MAX_IDLE_CONNS', maxOpen, 0)),
    maxLifetimeSec: int(env, 'SQL_MAX_LIFETIME', 60, 0),
  };
}

export function redactDsn(dsn: string): string {
  return dsn.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@').replace(/^([^:@/]+:)[^@]*@tcp/, '$1***@tcp');
}

/**
 * Without SESSION_SECRET, an embedded-SQLite install keeps a generated secret in `session_secret` next to the
 * database file, so a restart does not log everyone out. Other databases (usually several nodes) keep new-api's
 * per-process secret and the warning: they must share an explicit SESSION_SECRET.
 */
export function withPersistedSessionSecret(config: Config): Config {
  if (!config.sessionSecretGenerated || dbKindOf(config.sqlDsn) !== 'sqlite' || config.sqlitePath === ':memory:')
    return config;
  const file = join(dirname(config.sqlitePath), 'session_secret');
  let secret = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (!secret) {
    secret = randomBytes(32).toString('hex');
    ensurePrivateDir(dirname(file));
    writeFileSync(file, secret + '\n', { mode: 0o600 });
  }
  tightenFile(file);
  const cryptoFollows = config.cryptoSecret === config.sessionSecret;
  return {
    ...config,
    sessionSecret: secret,
    cryptoSecret: cryptoFollows ? secret : config.cryptoSecret,
    sessionSecretGenerated: false,
  };
}
