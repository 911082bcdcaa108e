// End-to-end runner: `npm run test:e2e -w web` (the root `npm test` builds web and server first).
//
// Starts the real server (server/dist/index.js) on a free port over a fresh temporary SQLite database, serving
// web/dist, with rate limits off; waits for /api/status; runs every web/e2e/**/*.e2e.ts with vitest
// (vitest.e2e.config.ts: one fork, files in sequence, console.e2e.ts first); stops the server, also on failure.
//
// Specs get the server URL in E2E_BASE_URL and a Chromium helper in e2e/browser.ts; the mock identity provider
// (mock-idp.mjs) is at E2E_IDP_URL with its client credentials in E2E_IDP_CLIENTS. The server runs with
// e2e/loopback-images.mjs preloaded (127.0.0.1 ports listed in E2E_LOOPBACK_ALLOW_FILE pass the SSRF guard) and the
// task poller ticking every second (TASK_POLL_INTERVAL).
// console.e2e.ts runs first and performs the setup wizard, creating the root account:
//   username: root   password: 12345678
// Later specs (e.g. relay.e2e.ts) can log in with it (loginAsRoot in e2e/browser.ts).
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IDP_CLIENTS, startMockIdp } from './mock-idp.mjs';

const webDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const rootDir = join(webDir, '..');
const resultsDir = join(webDir, 'test-results');
mkdirSync(resultsDir, { recursive: true });

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitForStatus(base, server, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`server exited early with code ${server.exitCode}`);
    try {
      const res = await fetch(`${base}/api/status`);
      if (res.ok && (await res.json()).success) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('server did not answer /api/status in time');
}

function stop(child) {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const serverEntry = join(rootDir, 'server', 'dist', 'index.js');
const webDist = join(webDir, 'dist');
for (const p of [serverEntry, join(webDist, 'index.html')]) {
  if (!existsSync(p)) {
    console.error(`missing ${p}: run \`npm run build\` at the repository root first`);
    process.exit(1);
  }
}

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const dataDir = mkdtempSync(join(tmpdir(), 'gw-e2e-'));
const serverLog = createWriteStream(join(resultsDir, 'server.log'));
// the 127.0.0.1 ports a spec's mock image host listens on (e2e/loopback-images.mjs), written by that spec
const loopbackAllowFile = join(dataDir, 'loopback-allow.txt');
// the identity provider the OAuth specs sign in with (GitHub's endpoints reach the server through OAUTH_ENDPOINTS_JSON)
const idp = await startMockIdp({ githubCallback: `${base}/oauth/github` });
const server = spawn(process.execPath, ['--import', join(webDir, 'e2e', 'loopback-images.mjs'), serverEntry], {
  cwd: dataDir,
  env: {
    ...process.env,
    PORT: String(port),
    SQLITE_PATH: join(dataDir, 'e2e.db'),
    SQL_DSN: '',
    REDIS_CONN_STRING: '',
    WEB_DIST_DIR: webDist,
    SESSION_SECRET: 'e2e-session-secret-0123456789abcdef',
    GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
    GLOBAL_WEB_RATE_LIMIT_ENABLE: 'false',
    CRITICAL_RATE_LIMIT_ENABLE: 'false',
    NODE_ENV: 'production',
    OAUTH_ENDPOINTS_JSON: idp.endpointsJson,
    // the task poller ticks every second, so the Midjourney spec sees a task move without waiting 15 s
    TASK_POLL_INTERVAL: '1',
    E2E_LOOPBACK_ALLOW_FILE: loopbackAllowFile,
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
server.stdout.pipe(serverLog);
server.stderr.pipe(serverLog);

let code = 1;
const cleanup = async () => {
  await stop(server);
  await idp.close();
  rmSync(dataDir, { recursive: true, force: true });
};
process.on('SIGINT', () => void cleanup().then(() => process.exit(130)));
process.on('SIGTERM', () => void cleanup().then(() => process.exit(143)));

try {
  await waitForStatus(base, server);
  console.log(`e2e: server on ${base} (log: web/test-results/server.log)`);
  const vitestBin = [
    join(webDir, 'node_modules', '.bin', 'vitest'),
    join(rootDir, 'node_modules', '.bin', 'vitest'),
  ].find(existsSync);
  const runner = spawn(vitestBin, ['run', '-c', 'vitest.e2e.config.ts', ...process.argv.slice(2)], {
    cwd: webDir,
    env: {
      ...process.env,
      E2E_BASE_URL: base,
      E2E_IDP_URL: idp.url,
      E2E_IDP_CLIENTS: JSON.stringify(IDP_CLIENTS),
      E2E_LOOPBACK_ALLOW_FILE: loopbackAllowFile,
    },
    stdio: 'inherit',
  });
  code = await new Promise((resolve) => runner.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
} catch (err) {
  console.error(`e2e: ${err instanceof Error ? err.message : String(err)}`);
  code = 1;
} finally {
  await cleanup();
}
process.exit(code);
