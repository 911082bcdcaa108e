// First load of the console on a slow link: `node bench/first-load.mjs` (after `npm run build`).
//
// Starts the built server (server/dist, a fresh SQLite database in a temp dir, serving web/dist, rate limits off),
// completes setup through the API, then opens pages in Chromium (playwright-core, /usr/bin/chromium) with the network
// throttled through CDP (Network.emulateNetworkConditions: 1.6 Mbit/s down, 750 kbit/s up, 150 ms round trip, the
// "Slow 4G"-like link of issue 34) and an empty HTTP cache, and prints per scenario:
//   - FCP: first contentful paint (the inline loading state of index.html counts, as it is what the user sees);
//   - content: when the page's own content is on screen (home: the welcome card; /token: the tokens table);
//   - transferred: bytes received over the wire until then (headers included, as Chromium counts them), and requests.
// Scenarios: `/` for a visitor; `/token` for a logged-in user (logged in beforehand, then the cache emptied); `/` again
// with `Accept-Encoding: identity` (what the same load cost before the console was served compressed); `/token` on a
// repeat visit (warm cache: hashed assets are cached for a year, only index.html is revalidated).
// Targets (issue 34): FCP of `/` under 1.5 s, of `/token` under 2.5 s, first load under 350 kB.
//   - 1st API call: when the page sent its first /api/ request, from the document's request (the bundle's start-up
//     work sits in front of it);
//   - script: JavaScript run time until the content is visible (CDP Performance.getMetrics ScriptDuration).
// Env: FIRST_LOAD_RUNS (runs per scenario, median reported; default 3), FIRST_LOAD_VERBOSE=1 (list each load's largest
// requests), FIRST_LOAD_CPU=4 (CPU slowed down that many times through Emulation.setCPUThrottlingRate: a loaded or
// low-end machine; default 1), CHROMIUM_PATH.
// Figures are recorded in docs/perf/first-load.md.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const serverEntry = join(rootDir, 'server', 'dist', 'index.js');
const webDist = join(rootDir, 'web', 'dist');
const RUNS = Number(process.env.FIRST_LOAD_RUNS ?? 3);
const CPU_SLOWDOWN = Number(process.env.FIRST_LOAD_CPU ?? 1);
const LINK = { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 750e3 / 8 };
const ROOT = { username: 'root', password: 'bench-first-load-1' };
// the byte budget is the first load's: a visitor's `/`
const TARGETS = { '/': { fcp: 1500, bytes: 350 * 1024 }, '/token': { fcp: 2500 } };

for (const p of [serverEntry, join(webDist, 'index.html')]) {
  if (!existsSync(p)) {
    console.error(`missing ${p}: run \`npm run build\` at the repository root first`);
    process.exit(1);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitForStatus(base, server) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`server exited with code ${server.exitCode}`);
    try {
      const res = await fetch(`${base}/api/status`);
      if (res.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('server did not answer /api/status in time');
}

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const dataDir = mkdtempSync(join(tmpdir(), 'gw-first-load-'));
const server = spawn(process.execPath, [serverEntry], {
  cwd: dataDir,
  env: {
    ...process.env,
    PORT: String(port),
    SQLITE_PATH: join(dataDir, 'bench.db'),
    SQL_DSN: '',
    REDIS_CONN_STRING: '',
    WEB_DIST_DIR: webDist,
    SESSION_SECRET: 'first-load-bench-secret-0123456789',
    GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
    GLOBAL_WEB_RATE_LIMIT_ENABLE: 'false',
    CRITICAL_RATE_LIMIT_ENABLE: 'false',
    NODE_ENV: 'production',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});

const profile = mkdtempSync(join(tmpdir(), 'gw-first-load-chromium-'));
let browser;

async function cleanup() {
  await browser?.close().catch(() => {});
  if (server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  }
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
}

/** Counts bytes received per request (Network.loadingFinished's encodedDataLength: headers and body as sent). */
function byteCounter(cdp) {
  const sizes = new Map();
  const urls = new Map();
  /** seconds (CDP's monotonic clock) of this load's document request and of its first /api/ request */
  let documentAt = null;
  let firstApiAt = null;
  cdp.on('Network.requestWillBeSent', (e) => {
    urls.set(e.requestId, e.request.url);
    if (e.type === 'Document' && documentAt === null) documentAt = e.timestamp;
    else if (firstApiAt === null && new URL(e.request.url).pathname.startsWith('/api/')) firstApiAt = e.timestamp;
  });
  cdp.on('Network.loadingFinished', (e) => sizes.set(e.requestId, e.encodedDataLength));
  cdp.on('Network.loadingFailed', (e) => sizes.delete(e.requestId));
  return {
    reset: () => {
      sizes.clear();
      documentAt = null;
      firstApiAt = null;
    },
    /** ms from the document's request to the first /api/ request of this load */
    firstApi: () => (documentAt !== null && firstApiAt !== null ? (firstApiAt - documentAt) * 1000 : Number.NaN),
    total: () => [...sizes.values()].reduce((a, b) => a + b, 0),
    count: () => sizes.size,
    /** the largest requests of this load, for FIRST_LOAD_VERBOSE */
    largest: (n) =>
      [...sizes.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(
          ([id, size]) =>
            `${(size / 1024).toFixed(1).padStart(7)} kB  ${new URL(urls.get(id) ?? 'about:blank').pathname}`,
        ),
  };
}

/** One throttled load of `path`; `ready` is the selector of the page's own content. */
async function measure(page, cdp, counter, path, ready, { warm = false, identity = false } = {}) {
  if (!warm) await cdp.send('Network.clearBrowserCache');
  await cdp.send('Network.setExtraHTTPHeaders', { headers: identity ? { 'Accept-Encoding': 'identity' } : {} });
  await cdp.send('Network.emulateNetworkConditions', LINK);
  counter.reset();
  await restartScriptClock(cdp);
  await page.goto(base + path, { waitUntil: 'commit' });
  await page.locator(ready).first().waitFor({ state: 'visible', timeout: 60_000 });
  const content = await page.evaluate(() => performance.now());
  const script = (await scriptSeconds(cdp)) * 1000;
  // let the requests that the page started finish (they are part of this load's bytes)
  await page.waitForLoadState('networkidle', { timeout: 60_000 }).catch(() => {});
  const fcp = await page.evaluate(
    () => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN,
  );
  await cdp.send('Network.emulateNetworkConditions', {
    ...LINK,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
  if (process.env.FIRST_LOAD_VERBOSE) console.log(`${path}${warm ? ' (warm)' : ''}\n${counter.largest(15).join('\n')}`);
  return { fcp, content, script, firstApi: counter.firstApi(), bytes: counter.total(), requests: counter.count() };
}

/** Starts the page's metrics again (Performance.enable makes new counters). */
async function restartScriptClock(cdp) {
  await cdp.send('Performance.disable');
  await cdp.send('Performance.enable');
}

/** The page's JavaScript run time since restartScriptClock, in seconds. */
async function scriptSeconds(cdp) {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return metrics.find((m) => m.name === 'ScriptDuration')?.value ?? Number.NaN;
}

/** A signed-out visitor with an empty cache opens /login and signs in; `afterSubmit`: submit → tokens list shown. */
async function signIn(page, cdp, counter) {
  await browser.clearCookies();
  await page.goto(`${base}/api/status`);
  await page.evaluate(() => localStorage.clear());
  await cdp.send('Network.clearBrowserCache');
  await cdp.send('Network.setExtraHTTPHeaders', { headers: {} });
  await cdp.send('Network.emulateNetworkConditions', LINK);
  counter.reset();
  await restartScriptClock(cdp);
  await page.goto(`${base}/login`, { waitUntil: 'commit' });
  await page.locator('input#username').waitFor({ state: 'visible', timeout: 60_000 });
  const content = await page.evaluate(() => performance.now());
  const script = (await scriptSeconds(cdp)) * 1000;
  const firstApi = counter.firstApi();
  const fcp = await page.evaluate(
    () => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN,
  );
  await page.locator('input#username').fill(ROOT.username);
  await page.locator('input#password').fill(ROOT.password);
  const submitted = Date.now();
  await page.locator('form button[type=submit]').click();
  await page.waitForURL(/\/token$/, { timeout: 60_000 });
  await page.locator('.ant-table').first().waitFor({ state: 'visible', timeout: 60_000 });
  const afterSubmit = Date.now() - submitted;
  await page.waitForLoadState('networkidle', { timeout: 60_000 }).catch(() => {});
  await cdp.send('Network.emulateNetworkConditions', {
    ...LINK,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
  if (process.env.FIRST_LOAD_VERBOSE) console.log(`/login → /token\n${counter.largest(15).join('\n')}`);
  return { fcp, content, script, firstApi, afterSubmit, bytes: counter.total(), requests: counter.count() };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  await waitForStatus(base, server);
  const setup = await fetch(`${base}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      ...ROOT,
      confirmPassword: ROOT.password,
      SelfUseModeEnabled: false,
      DemoSiteEnabled: false,
    }),
  });
  if (!(await setup.json()).success) throw new Error('setup failed');

  browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1366, height: 860 },
    locale: 'zh-CN',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-sync'],
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const cdp = await browser.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Performance.enable');
  if (CPU_SLOWDOWN > 1) await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
  const counter = byteCounter(cdp);

  const home = '.ant-card h2';
  const tokens = '.ant-table';
  const scenarios = [
    { name: '/ (visitor, cold cache)', path: '/', ready: home, target: TARGETS['/'] },
    { name: '/ (visitor, no compression)', path: '/', ready: home, opts: { identity: true } },
  ];
  const results = [];
  const run = async (s) => {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await measure(page, cdp, counter, s.path, s.ready, s.opts));
    results.push({ ...s, runs });
  };
  for (const s of scenarios) await run(s);

  // signing in on a cold cache: /login, then the tokens list the console lands on (logs in for the rows below)
  const journey = [];
  for (let i = 0; i < RUNS; i++) journey.push(await signIn(page, cdp, counter));
  results.push({ name: '/login, then sign in → /token (cold cache)', runs: journey });
  await run({ name: '/token (logged in, cold cache)', path: '/token', ready: tokens, target: TARGETS['/token'] });
  await run({ name: '/token (logged in, repeat visit)', path: '/token', ready: tokens, opts: { warm: true } });

  const ms = (x) => (Number.isFinite(x) ? `${(x / 1000).toFixed(2)} s` : 'n/a');
  const kb = (x) => `${(x / 1024).toFixed(0)} kB`;
  console.log(
    `\nFirst load, ${(LINK.downloadThroughput * 8e-6).toFixed(1)} Mbit/s, ${LINK.latency} ms RTT` +
      `${CPU_SLOWDOWN > 1 ? `, CPU ${CPU_SLOWDOWN}× slower` : ''}, median of ${RUNS} runs\n`,
  );
  console.log(
    '| scenario | FCP | 1st API call | script | content visible | sign-in → list | transferred | requests | target |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  let missed = 0;
  for (const r of results) {
    const fcp = median(r.runs.map((x) => x.fcp));
    const content = median(r.runs.map((x) => x.content));
    const firstApi = median(r.runs.map((x) => x.firstApi));
    const script = median(r.runs.map((x) => x.script));
    const bytes = median(r.runs.map((x) => x.bytes));
    const requests = median(r.runs.map((x) => x.requests));
    const afterSubmit = r.runs[0].afterSubmit === undefined ? '' : ms(median(r.runs.map((x) => x.afterSubmit)));
    let target = '';
    if (r.target) {
      const ok = fcp < r.target.fcp && (!r.target.bytes || bytes < r.target.bytes);
      if (!ok) missed++;
      target = `FCP < ${ms(r.target.fcp)}${r.target.bytes ? `, < ${kb(r.target.bytes)}` : ''}: ${ok ? 'met' : 'MISSED'}`;
    }
    console.log(
      `| ${r.name} | ${ms(fcp)} | ${ms(firstApi)} | ${ms(script)} | ${ms(content)} | ${afterSubmit} | ${kb(bytes)} | ` +
        `${requests} | ${target} |`,
    );
  }
  process.exitCode = missed ? 1 : 0;
} catch (err) {
  console.error(`first-load: ${err instanceof Error ? err.stack : String(err)}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
