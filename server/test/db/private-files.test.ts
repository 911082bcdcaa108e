// The embedded database's directory and files are readable by their owner only: a fresh install creates them so, and
// the files of an existing install (new-api left its database 0644) are tightened when the gateway opens them.
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { loadConfig, withPersistedSessionSecret } from '../../src/config.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('private data directory and database files', () => {
  const roots: string[] = [];
  const scratch = () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-private-'));
    roots.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of roots.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('creates the data directory 0700 and the database, its WAL files and the session secret 0600', async () => {
    const dataDir = join(scratch(), 'data');
    const dbPath = join(dataDir, 'one-api.db');
    const db = await openDatabase({ dsn: '', sqlitePath: dbPath });
    try {
      await migrateToLatest(db.db, db.kind);
      await db.db.insertInto('options').values({ key: 'SystemName', value: 'x' }).execute();
      expect(existsSync(dbPath + '-wal')).toBe(true);
      expect(modeOf(dataDir)).toBe(0o700);
      expect(modeOf(dbPath)).toBe(0o600);
      expect(modeOf(dbPath + '-wal')).toBe(0o600);
      expect(modeOf(dbPath + '-shm')).toBe(0o600);
    } finally {
      await db.close();
    }

    const config = withPersistedSessionSecret(
      loadConfig({ SQLITE_PATH: join(scratch(), 'nested', 'dir', 'one-api.db') }),
    );
    expect(config.sessionSecretGenerated).toBe(false);
    const secretDir = join(roots[1], 'nested', 'dir');
    expect(modeOf(join(roots[1], 'nested'))).toBe(0o700);
    expect(modeOf(secretDir)).toBe(0o700);
    expect(modeOf(join(secretDir, 'session_secret'))).toBe(0o600);
  });

  it('tightens the files of an existing install to 0600 and leaves its directory as it was', async () => {
    const dataDir = join(scratch(), 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const dbPath = join(dataDir, 'one-api.db');
    // a database another program created world-readable, with its WAL files left behind
    const other = new BetterSqlite3(dbPath);
    other.pragma('journal_mode = WAL');
    other.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)');
    for (const p of [dbPath, dbPath + '-wal', dbPath + '-shm']) chmodSync(p, 0o644);
    writeFileSync(join(dataDir, 'session_secret'), 'a'.repeat(64) + '\n', { mode: 0o644 });
    chmodSync(join(dataDir, 'session_secret'), 0o644);

    const db = await openDatabase({ dsn: '', sqlitePath: dbPath });
    try {
      expect(modeOf(dbPath)).toBe(0o600);
      expect(modeOf(dbPath + '-wal')).toBe(0o600);
      expect(modeOf(dbPath + '-shm')).toBe(0o600);
      expect(modeOf(dataDir)).toBe(0o755);
    } finally {
      await db.close();
      other.close();
    }
    const config = withPersistedSessionSecret(loadConfig({ SQLITE_PATH: dbPath }));
    expect(config.sessionSecret).toBe('a'.repeat(64));
    expect(modeOf(join(dataDir, 'session_secret'))).toBe(0o600);
  });
});
