// The built server as `npm start` runs it (server/dist/index.js, the server's V8 flags), on a fresh SQLite file:
// a few chat completions through a mock upstream, then a clean stop, and the log rows and charges checked. It guards
// what the test suite cannot see, since the tests run the server from its TypeScript sources: that the SQLite writer
// worker's thread (services/sqlite-worker-thread.ts) loads from dist/. Run `npm run build -w server` first, then
// `node scripts/dist-smoke.mjs`; exits non-zero on a failure.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_ENV, SERVER_NODE_FLAGS } from './server-flags.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const REQUESTS = 20;
const MODEL = 'gpt-4o-mini';
const work = mkdtempSync(join(tmpdir(), 'dist-smoke-'));
const sqlitePath = join(work, 'gateway.db');
const children = [];
const failures = [];

try {
  const mock = spawn(process.execPath, [join(root, 'bench/mock-upstream.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(mock);
  const mockPort = await new Promise((resolve) => {
    mock.stdout.on('data', (d) => {
      const m = /MOCK_PORT=(\d+)/.exec(String(d));
      if (m) resolve(m[1]);
    });
  });

  const { openDatabase } = await import(join(root, 'server/dist/db/connect.js'));
  const { migrateToLatest } = await import(join(root, 'server/dist/db/migrate.js'));
  const key = 'distsmoke'.padEnd(48, 'x');
  {
    const { db, kind, close } = await openDatabase({ dsn: '', sqlitePath });
    await migrateToLatest(db, kind);
    const now = Math.floor(Date.now() / 1000);
    await db.insertInto('setups').values({ version: 'smoke', initialized_at: now }).execute();
    await db
      .insertInto('users')
      .values({ username: 'smoke', password: 'x', role: 1, quota: 1e9, setting: '', aff_code: 's0' })
      .execute();
    const { id } = await db.selectFrom('users').select('id').executeTakeFirstOrThrow();
    await db
      .insertInto('tokens')
      .values({ user_id: id, key, name: 't', remain_quota: 1e8, unlimited_quota: false, created_time: now })
      .execute();
    await db
      .insertInto('channels')
      .values({
        type: 1,
        key: 'sk-up',
        name: 'ch',
        base_url: `http://127.0.0.1:${mockPort}`,
        models: MODEL,
        group: 'default',
        status: 1,
        created_time: now,
        priority: 0,
        weight: 0,
        other: '',
        other_info: '',
      })
      .execute();
    const ch = await db.selectFrom('channels').select('id').executeTakeFirstOrThrow();
    await db
      .insertInto('abilities')
      .values({ group: 'default', model: MODEL, channel_id: ch.id, enabled: true, priority: 0, weight: 0 })
      .execute();
    await close();
  }

  const port = 20_000 + Math.floor(Math.random() * 20_000);
  let output = '';
  const gateway = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(root, 'server/dist/index.js')], {
    cwd: work,
    env: {
      ...SERVER_ENV,
      ...process.env,
      PORT: String(port),
      SQLITE_PATH: sqlitePath,
      SESSION_SECRET: 'smoke',
      LOG_LEVEL: 'info',
      SQL_DSN: '',
      LOG_SQL_DSN: '',
      REDIS_CONN_STRING: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(gateway);
  gateway.stdout.on('data', (d) => (output += d));
  gateway.stderr.on('data', (d) => (output += d));
  let up = false;
  for (let i = 0; i < 100 && !up; i++) {
    up = await fetch(`http://127.0.0.1:${port}/api/status`).then(
      (r) => r.ok,
      () => false,
    );
    if (!up) await new Promise((r) => setTimeout(r, 100));
  }
  if (!up) throw new Error(`the gateway did not start:\n${output}`);

  for (let i = 0; i < REQUESTS; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.text();
    if (res.status !== 200) failures.push(`request ${i}: status ${res.status}`);
  }
  gateway.kill('SIGTERM');
  await new Promise((r) => gateway.once('exit', r));

  const workerLines = output.split('\n').filter((l) => /sqlite worker/i.test(l));
  if (workerLines.length) failures.push(`the SQLite writer worker reported:\n${workerLines.join('\n')}`);
  const { db, close } = await openDatabase({ dsn: '', sqlitePath });
  const logs = await db.selectFrom('logs').select(['quota']).where('type', '=', 2).execute();
  const user = await db.selectFrom('users').select(['used_quota', 'request_count']).executeTakeFirstOrThrow();
  await close();
  const logged = logs.reduce((s, l) => s + l.quota, 0);
  if (logs.length !== REQUESTS) failures.push(`${logs.length} consume-log rows for ${REQUESTS} requests`);
  if (user.request_count !== REQUESTS || user.used_quota !== logged || logged <= 0) {
    failures.push(`user charged ${user.used_quota} for ${user.request_count} requests, logs say ${logged}`);
  }
} catch (err) {
  failures.push(String(err?.stack ?? err));
} finally {
  for (const c of children) if (c.exitCode === null) c.kill();
  rmSync(work, { recursive: true, force: true });
}

if (failures.length) {
  console.error(`dist smoke test failed:\n${failures.join('\n')}`);
  process.exit(1);
}
console.log(`dist smoke test passed: ${REQUESTS} requests relayed, logged and charged by the built server`);
