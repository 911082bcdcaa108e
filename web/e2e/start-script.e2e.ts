// `npm start` stops with its server: SIGTERM to npm reaches the launcher (scripts/start.mjs) and the server, and
// killing npm outright still stops the server (the launcher notices it was orphaned). Runs the real command against
// the build the e2e run just made, on its own port and SQLite file.
import { describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function answers(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/status`, { signal: AbortSignal.timeout(1000) });
    return res.ok;
  } catch {
    return false;
  }
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

async function startNpm(): Promise<{ npm: ChildProcess; port: number; done(): void }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gw-start-'));
  const npm = spawn('npm', ['start'], {
    cwd: rootDir,
    env: { ...process.env, PORT: String(port), SQLITE_PATH: join(dir, 'start.db'), SQL_DSN: '', REDIS_CONN_STRING: '' },
    stdio: 'ignore',
  });
  const up = await until(() => answers(port), 60_000);
  // a start that did not answer in time is stopped, not left running after the test run
  if (!up) npm.kill('SIGTERM');
  expect(up).toBe(true);
  return { npm, port, done: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('npm start', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`stops the server when npm gets ${signal}`, async () => {
      const { npm, port, done } = await startNpm();
      try {
        npm.kill(signal);
        expect(await until(async () => !(await answers(port)), 15_000)).toBe(true);
      } finally {
        done();
      }
    }, 90_000);
  }
});
