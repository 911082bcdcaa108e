import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, dbKindOf, loadConfig, withPersistedSessionSecret } from '../../src/config.js';
import { parseMysqlDsn } from '../../src/db/connect.js';

describe('configuration from the environment', () => {
  it("uses new-api's defaults", () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.sqlitePath).toBe('./data/one-api.db');
    expect(c.syncFrequencySec).toBe(60);
    expect(c.streamingTimeoutSec).toBe(60);
    expect(c.shutdownTimeoutSec).toBe(8);
    expect(loadConfig({ SHUTDOWN_TIMEOUT: '0' }).shutdownTimeoutSec).toBe(0);
    expect(c.trustedProxies).toEqual([]);
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1\n::1' }).trustedProxies).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
    ]);
    expect(loadConfig({ TRUSTED_PROXIES: ' * ' }).trustedProxies).toEqual(['*']);
    expect(() => loadConfig({ TRUSTED_PROXIES: '*, 10.0.0.0/8' })).toThrow(
      'TRUSTED_PROXIES: "*" is not an IP address or CIDR range',
    );
    expect(() => loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8,cloudflare' })).toThrow(
      'TRUSTED_PROXIES: "cloudflare" is not an IP address or CIDR range',
    );
    expect(c.nodeType).toBe('master');
    expect(c.azureDefaultApiVersion).toBe('2025-04-01-preview');
    expect(loadConfig({ AZURE_DEFAULT_API_VERSION: ' 2024-10-21 ' }).azureDefaultApiVersion).toBe('2024-10-21');
    expect(c.sessionSecretGenerated).toBe(true);
  });

  it('selects the database from SQL_DSN like new-api', () => {
    expect(dbKindOf('')).toBe('sqlite');
    expect(dbKindOf('local')).toBe('sqlite');
    expect(dbKindOf('postgres://u:p@h/db')).toBe('postgres');
    expect(dbKindOf('postgresql://u:p@h/db')).toBe('postgres');
    expect(dbKindOf('root:pw@tcp(127.0.0.1:3306)/oneapi?parseTime=true')).toBe('mysql');
    expect(parseMysqlDsn('root:pw@tcp(10.0.0.5:3307)/oneapi?parseTime=true')).toEqual({
      user: 'root',
      password: 'pw',
      host: '10.0.0.5',
      port: 3307,
      database: 'oneapi',
    });
    expect(parseMysqlDsn('mysql://a:b%40c@db.local/x')).toMatchObject({
      user: 'a',
      password: 'b@c',
      host: 'db.local',
      port: 3306,
      database: 'x',
    });
  });

  it("sizes the PostgreSQL / MySQL pool from new-api's SQL_MAX_* variables", () => {
    expect(loadConfig({}).sqlPool).toEqual({ maxOpen: 20, maxIdle: 20, maxLifetimeSec: 60 });
    expect(loadConfig({ SQL_MAX_OPEN_CONNS: '50', SQL_MAX_IDLE_CONNS: '5', SQL_MAX_LIFETIME: '0' }).sqlPool).toEqual({
      maxOpen: 50,
      maxIdle: 5,
      maxLifetimeSec: 0,
    });
    // new-api's idle default (100) above a smaller open limit keeps no more than the limit
    expect(loadConfig({ SQL_MAX_OPEN_CONNS: '8', SQL_MAX_IDLE_CONNS: '100' }).sqlPool.maxIdle).toBe(8);
    expect(() => loadConfig({ SQL_MAX_OPEN_CONNS: '0' })).toThrow(/SQL_MAX_OPEN_CONNS must be >= 1/);
    expect(() => loadConfig({ SQL_MAX_LIFETIME: '1m' })).toThrow(/SQL_MAX_LIFETIME must be an integer/);
  });

  it('honours the SQLITE_PATH busy-timeout suffix', () => {
    const c = loadConfig({ SQLITE_PATH: '/tmp/x.db?_busy_timeout=5000' });
    expect(c.sqlitePath).toBe('/tmp/x.db');
    expect(c.sqliteBusyTimeoutMs).toBe(5000);
  });

  it('refuses bad values with a clear message', () => {
    expect(() => loadConfig({ SESSION_SECRET: 'random_string' })).toThrow(ConfigError);
    // deploy/env.example's placeholders are refused as they are (issue 46, point 14)
    expect(() => loadConfig({ SESSION_SECRET: 'change-me-to-a-long-random-secret' })).toThrow(
      /SESSION_SECRET is set to the example value/,
    );
    expect(() => loadConfig({ CRYPTO_SECRET: 'random_string' })).toThrow(/CRYPTO_SECRET is set to the example value/);
    expect(() =>
      loadConfig({ SQL_DSN: 'postgres://gateway:change-me-to-a-long-random-password@postgres:5432/gateway' }),
    ).toThrow(/SQL_DSN holds the example password/);
    expect(loadConfig({ SESSION_SECRET: 'a-real-secret-of-my-own', CRYPTO_SECRET: 'another-one' }).cryptoSecret).toBe(
      'another-one',
    );
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(/PORT must be an integer/);
    expect(() => loadConfig({ NODE_TYPE: 'leader' })).toThrow(/NODE_TYPE/);
    expect(() => loadConfig({ SQL_DSN: 'nonsense' })).toThrow(/SQL_DSN/);
    expect(() => loadConfig({ REDIS_CONN_STRING: 'localhost:6379' })).toThrow(/REDIS_CONN_STRING/);
    expect(() => loadConfig({ FORCE_STREAM_OPTION: 'maybe' })).toThrow(/true or false/);
  });

  it('keeps a generated session secret next to an embedded SQLite database across restarts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-cfg-'));
    const env = { SQLITE_PATH: join(dir, 'one-api.db') };
    const first = withPersistedSessionSecret(loadConfig(env));
    const second = withPersistedSessionSecret(loadConfig(env));
    expect(first.sessionSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(second.sessionSecret).toBe(first.sessionSecret);
    expect(first.cryptoSecret).toBe(first.sessionSecret);
    expect(first.sessionSecretGenerated).toBe(false);
    expect(readFileSync(join(dir, 'session_secret'), 'utf8').trim()).toBe(first.sessionSecret);
    expect(statSync(join(dir, 'session_secret')).mode & 0o077).toBe(0);
    // an explicit secret, or a server database, is left alone
    expect(withPersistedSessionSecret(loadConfig({ ...env, SESSION_SECRET: 'explicit' })).sessionSecret).toBe(
      'explicit',
    );
    expect(withPersistedSessionSecret(loadConfig({ SQL_DSN: 'postgres://h/db' })).sessionSecretGenerated).toBe(true);
  });
});
