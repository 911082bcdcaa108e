// `npm run bench`: the gateway against a direct call to the same mock upstream, in one run on this machine.
//
// Starts bench/mock-upstream.mjs and the built gateway (server/dist, SQLite in a temp dir, default caches) loaded
// with 1,000 tokens and 100 channels, then measures, for direct-to-mock, through the gateway and through the stack's
// floor (bench/floor-relay.mjs):
//   - an unloaded probe (1 connection): p50/p99 time to first byte and to last byte, JSON and stream;
//   - RPS and p50/p99 latency with autocannon, JSON and stream, at 32 and 128 connections, 0 ms and 50 ms upstream;
//   - the gateway's RSS (idle, and the peak during the 128-connection runs);
//   - the share of the machine's CPU time that was idle and stolen (by the hypervisor) during each measurement, read
//     from /proc/stat: on a shared VM a stolen spell during one side of a pair moves its ratio by tens of points.
// Reports ratios gateway/direct and the added latency, prints a Markdown summary and writes it to bench/results/.
//
// Modes (BENCH_MODES): `json` and `stream`, an OpenAI Chat Completions client on OpenAI channels; `claude-json` and
// `claude-stream`, an Anthropic Messages client (POST /v1/messages, x-api-key) on Anthropic channels (type 14) served
// by the same mock: the native lane, direct = the same Claude request to the mock; `claude-x-json` and
// `claude-x-stream`, that Claude client on OpenAI channels: the translated lane, direct = the `json` / `stream` OpenAI
// request, so its ratio is the share of plain OpenAI direct RPS the translated lane keeps. After the load table, each
// Claude cell's ratio is set against the matching OpenAI cell's (json ↔ claude-json / claude-x-json, stream ↔ …).
// The floor relays Chat Completions only: it is measured for the OpenAI modes.
//
// Env: BENCH_DURATION (s per measurement, default 3), BENCH_ROUNDS (direct/gateway pairs per cell, 5),
// BENCH_CONNS ("32 128"), BENCH_DELAYS ("0 50"), BENCH_MODES
// (all six; "json stream" for the OpenAI lane alone, a third of the time), BENCH_PROBE_N (2000), BENCH_PROBE_WARMUP (8000), BENCH_TOKENS (1000), BENCH_TOKEN_QUOTA (1e12), BENCH_CHANNELS (100),
// BENCH_MAX_TOKENS (0: the body sets no max_tokens; with it the gateway's reservation depends on the prompt's size),
// BENCH_SQL_DSN (empty: SQLite; a PostgreSQL or MySQL DSN as SQL_DSN takes it: the run creates its own database on that
// server, with the DSN's credentials, and drops it at the end), BENCH_RATE (requests per second for every load
// measurement instead of as many as possible: the gateway's CPU time per request at a fixed rate is the steadiest
// figure for comparing two builds; a saturated RPS ratio swung by ±7 % between two copies of one build here),
// BENCH_NODE_FLAGS (extra Node.js flags for the gateway process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
// BENCH_LOADGEN (wrk when it is installed, else autocannon; see LOADGEN below), BENCH_FLOOR (1: bench/floor-relay.mjs,
// the stack's floor, is measured after the gateway in every probe and round; 0 leaves it out).
// BENCH_TLS=1: the mock serves https with the self-signed certificate of server/test/fixtures/tls (name localhost),
// which the gateway, the floor and this script trust through NODE_EXTRA_CA_CERTS: the relay's upstream calls pay for
// TLS as they do against a real provider; direct is then measured over https too.
//
// BENCH_SERVE=<upstream base URL> measures nothing: it seeds the same database with its channels pointing at that
// upstream, serves the gateway on BENCH_PORT (3300) and prints GATEWAY_URL, GATEWAY_KEY and GATEWAY_PID lines for a
// load generator of one's own (e.g. a peer benchmark that also runs other gateways), until Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../scripts/server-flags.mjs';
import { checkAnswer } from './answer-check.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
// five short pairs rather than three long ones, same time per cell: the two sides of a pair are measured closer
// together, and the median of five shrugs off two rounds hit by a stolen spell of the VM
const DURATION = Number(env.BENCH_DURATION ?? 3);
const ROUNDS = Math.max(1, Number(env.BENCH_ROUNDS ?? 5));
const CONNS = (env.BENCH_CONNS ?? '32 128').split(/\s+/).filter(Boolean).map(Number);
const DELAYS = (env.BENCH_DELAYS ?? '0 50').split(/\s+/).filter(Boolean).map(Number);
const MODES = (env.BENCH_MODES ?? 'json stream claude-json claude-stream claude-x-json claude-x-stream')
  .split(/\s+/)
  .filter(Boolean);
// the p99 of 500 requests is their 5th-slowest one: on this VM it swung by 1-3 ms between runs; 2,000 give a stable tail
const PROBE_N = Number(env.BENCH_PROBE_N ?? 2000);
// sequential requests before each probe's measured ones: the added latency is the warmed-up (JIT-compiled) server's.
// 2,000 were not enough: with --trace-opt, V8 still compiled request-path functions for the first time (tokenAuth,
// reservationFor, the channel pick, writeConsumeLog) during the measured 2,000, and re-optimised Node's HTTP internals
// after dependency deopts until ~8,000 requests. Compile jobs run on V8's background threads, and on these 2-vCPU VMs
// a burst of work on the second vCPU while a one-connection request is in flight often stalls one of its hops ~2 ms
// (`perf sched`: during almost every request over 1.5 ms another thread ran a burst: V8's background threads, the log
// worker's transaction, a kernel thread). Gateway ttfb p99 with 2,000: 2.54 / 2.56 ms (JSON), 2.40 / 2.55 ms
// (stream); with 8,000: 1.41 / 0.88 ms and 1.96 / 1.79 ms (two runs each, same build).
const PROBE_WARMUP = Number(env.BENCH_PROBE_WARMUP ?? 8000);
const N_TOKENS = Number(env.BENCH_TOKENS ?? 1000);
const N_CHANNELS = Number(env.BENCH_CHANNELS ?? 100);
const MAX_TOKENS = Number(env.BENCH_MAX_TOKENS ?? 0);
// channels serving the measured OpenAI model, and as many Anthropic ones serving the Claude model
const HOT_CHANNELS = Math.min(10, N_CHANNELS);
// each token's remain_quota: below 100 × a request's reservation (37 here) every request waits for its reservation
const TOKEN_QUOTA = Number(env.BENCH_TOKEN_QUOTA ?? 1e12);
const SQL_DSN = env.BENCH_SQL_DSN ?? '';
const RATE = Number(env.BENCH_RATE ?? 0);
// the stack's floor (bench/floor-relay.mjs) measured beside the gateway in every probe and round; 0 leaves it out
const FLOOR = (env.BENCH_FLOOR ?? '1') !== '0';
const MODEL = 'gpt-4o-mini';
// the native Claude lane's model, served by the Anthropic channels (a model with a default ratio)
const CLAUDE_MODEL = 'claude-3-5-haiku-20241022';
// the translated lane's model: a name of its own on the OpenAI channels that serve MODEL, priced like it
const CLAUDE_X_MODEL = 'gpt-4o-mini-2024-07-18';
const ANTHROPIC_VERSION = '2023-06-01';
/**
 * What each BENCH_MODES entry measures. client: the format the gateway is called in; direct: the format of the
 * request sent straight to the mock; versus: the OpenAI mode whose ratio a Claude mode's is compared with; goal: the
 * least share of that ratio the Claude lane should keep (native within 10 %, translated at least half).
 */
const MODE_SPECS = {
  json: { client: 'openai', direct: 'openai', stream: false, model: MODEL },
  stream: { client: 'openai', direct: 'openai', stream: true, model: MODEL },
  'claude-json': { client: 'claude', direct: 'claude', stream: false, model: CLAUDE_MODEL, versus: 'json', goal: 90 },
  'claude-stream': {
    client: 'claude',
    direct: 'claude',
    stream: true,
    model: CLAUDE_MODEL,
    versus: 'stream',
    goal: 90,
  },
  'claude-x-json': {
    client: 'claude',
    direct: 'openai',
    stream: false,
    model: CLAUDE_X_MODEL,
    versus: 'json',
    goal: 50,
  },
  'claude-x-stream': {
    client: 'claude',
    direct: 'openai',
    stream: true,
    model: CLAUDE_X_MODEL,
    versus: 'stream',
    goal: 50,
  },
};
for (const mode of MODES)
  if (!MODE_SPECS[mode]) throw new Error(`BENCH_MODES: ${mode} is none of ${Object.keys(MODE_SPECS).join(', ')}`);
// The load generator shares the two cores with the mock and the gateway, and takes CPU from them. wrk (C, one
// thread, a process of its own) is what perf-anchors.md measured the targets' references with (Portkey, the lean
// Node relay); autocannon in this process costs several times more CPU per request. Measured on one VM, same build,
// 0-ms JSON at 32 connections: 21-23 % of direct with autocannon, 24-27 % with wrk, whose rounds also spread less.
// autocannon stays for machines without wrk (apt-get install wrk) and for BENCH_RATE, which wrk cannot do; the report
// names the one used.
const hasWrk = () => !spawnSync('wrk', ['-v'], { stdio: 'ignore' }).error;
const LOADGEN = env.BENCH_LOADGEN ?? (RATE > 0 || !hasWrk() ? 'autocannon' : 'wrk');
if (LOADGEN !== 'wrk' && LOADGEN !== 'autocannon') throw new Error(`BENCH_LOADGEN: wrk or autocannon, not ${LOADGEN}`);
if (LOADGEN === 'wrk' && RATE > 0) throw new Error('BENCH_RATE needs autocannon (wrk has no fixed rate)');

const TLS = env.BENCH_TLS === '1';
const TLS_FILES = {
  MOCK_TLS_CERT: join(root, 'server/test/fixtures/tls/localhost-cert.pem'),
  MOCK_TLS_KEY: join(root, 'server/test/fixtures/tls/localhost-key.pem'),
};
// NODE_EXTRA_CA_CERTS is read once at start: this script runs itself again with it, and its children inherit it
if (TLS && env.NODE_EXTRA_CA_CERTS !== TLS_FILES.MOCK_TLS_CERT) {
  const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    env: { ...env, NODE_EXTRA_CA_CERTS: TLS_FILES.MOCK_TLS_CERT },
    stdio: 'inherit',
  });
  process.exit(r.status ?? 1);
}

const children = [];
const cleanup = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
};
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));
/** BENCH_SQL_DSN: drops the run's database, once the gateway has stopped */
let dropDatabase = async () => {};
async function stopAll() {
  cleanup();
  for (let i = 0; i < 100 && children.some((c) => c.exitCode === null && c.signalCode === null); i++)
    await new Promise((r) => setTimeout(r, 100));
  await dropDatabase().catch((err) => console.error(`could not drop the bench database: ${err.message}`));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Runs a bench/ script in a process of its own and resolves with the port it prints as `<name>=<port>`. */
function startScript(script, args, name, { nodeFlags = [], extraEnv = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, join(root, 'bench', script), ...args], {
      env: { ...extraEnv, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    child.stdout.on('data', (d) => {
      const m = new RegExp(`${name}=(\\d+)`).exec(String(d));
      if (m) resolve({ port: Number(m[1]), pid: child.pid });
    });
    child.on('exit', (code) => reject(new Error(`${script} exited ${code}`)));
  });
}

const startMock = async () =>
  (await startScript('mock-upstream.mjs', [], 'MOCK_PORT', { extraEnv: TLS ? TLS_FILES : {} })).port;
/** the mock's base URL; https on the certificate's name */
const mockBase = (port) => (TLS ? `https://localhost:${port}` : `http://127.0.0.1:${port}`);
// with the gateway's V8 flags and malloc setting
const startFloor = (upstream) =>
  startScript('floor-relay.mjs', [upstream], 'FLOOR_PORT', { nodeFlags: SERVER_NODE_FLAGS, extraEnv: SERVER_ENV });

/** BENCH_SQL_DSN: a new database on that server for this run, as a DSN the gateway takes, and how to drop it. */
async function freshDatabase(serverDsn) {
  const name = `gw_bench_${process.pid}_${Date.now().toString(36)}`;
  // one short connection per statement, opened by `connect` (pg's Client and mysql2's connection share query/end)
  const adminVia = (connect) => async (sql) => {
    const c = await connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  if (/^postgres(ql)?:\/\//.test(serverDsn)) {
    const pg = (await import('pg')).default;
    const admin = adminVia(async () => {
      const c = new pg.Client({ connectionString: serverDsn });
      await c.connect();
      return c;
    });
    await admin(`CREATE DATABASE ${name}`);
    const u = new URL(serverDsn);
    u.pathname = `/${name}`;
    return {
      label: 'PostgreSQL',
      dsn: u.toString(),
      drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
    };
  }
  const { parseMysqlDsn } = await import(join(root, 'server/dist/db/connect.js'));
  const { host, port, user, password } = parseMysqlDsn(serverDsn);
  const mysql = (await import('mysql2/promise')).default;
  const admin = adminVia(() => mysql.createConnection({ host, port, user, password }));
  await admin(`CREATE DATABASE ${name} CHARACTER SET utf8mb4`);
  const auth = `${encodeURIComponent(user)}${password ? `:${encodeURIComponent(password)}` : ''}`;
  return {
    label: 'MySQL',
    dsn: `mysql://${auth}@${host}:${port}/${name}`,
    drop: () => admin(`DROP DATABASE IF EXISTS ${name}`),
  };
}

async function seed(dsn, sqlitePath, mockUrl) {
  const { openDatabase } = await import(join(root, 'server/dist/db/connect.js'));
  const { migrateToLatest } = await import(join(root, 'server/dist/db/migrate.js'));
  const { db, kind, close } = await openDatabase({ dsn, sqlitePath });
  await migrateToLatest(db, kind);
  const now = Math.floor(Date.now() / 1000);
  await db.insertInto('setups').values({ version: 'bench', initialized_at: now }).execute();
  const users = [];
  for (let i = 0; i < 10; i++)
    users.push({
      username: `bench${i}`,
      password: 'x',
      role: i === 0 ? 100 : 1,
      quota: 1e13,
      setting: '',
      aff_code: `b${i}`,
    });
  await db.insertInto('users').values(users).execute();
  const ids = (await db.selectFrom('users').select('id').execute()).map((r) => r.id);
  const keys = [];
  const tokens = [];
  for (let i = 0; i < N_TOKENS; i++) {
    const key = `bench${String(i).padStart(6, '0')}`.padEnd(48, 'x');
    keys.push(key);
    tokens.push({
      user_id: ids[i % ids.length],
      key,
      name: `t${i}`,
      remain_quota: TOKEN_QUOTA,
      unlimited_quota: false,
      created_time: now,
    });
  }
  for (let i = 0; i < tokens.length; i += 200)
    await db
      .insertInto('tokens')
      .values(tokens.slice(i, i + 200))
      .execute();
  // channels 0..hot-1 serve MODEL (and the translated lane's model), the next `hot` are Anthropic channels serving
  // CLAUDE_MODEL, the rest one model each that no request asks for: the routing table's size. The Anthropic ones take
  // the places of such padding channels, so the total stays N_CHANNELS (unless it is below 2 × hot).
  const hot = HOT_CHANNELS;
  const total = Math.max(N_CHANNELS, 2 * hot);
  for (let i = 0; i < total; i++) {
    const anthropic = i >= hot && i < 2 * hot;
    const channelModels = i < hot ? [MODEL, CLAUDE_X_MODEL] : anthropic ? [CLAUDE_MODEL] : [`bench-model-${i}`];
    await db
      .insertInto('channels')
      .values({
        type: anthropic ? 14 : 1,
        key: anthropic ? 'sk-ant-upstream' : 'sk-upstream',
        name: `ch${i}`,
        base_url: mockUrl,
        models: channelModels.join(','),
        group: 'default',
        status: 1,
        created_time: now,
        priority: 0,
        weight: 0,
        other: '',
        other_info: '',
      })
      .execute();
    // no RETURNING on MySQL
    const row = await db.selectFrom('channels').select('id').where('name', '=', `ch${i}`).executeTakeFirstOrThrow();
    await db
      .insertInto('abilities')
      .values(
        channelModels.map((model) => ({
          group: 'default',
          model,
          channel_id: row.id,
          enabled: true,
          priority: 0,
          weight: 0,
        })),
      )
      .execute();
  }
  await close();
  return keys;
}

/** The gateway on `port`, run from a directory of its own inside the run's `work` directory (removed with it). */
async function startGateway(dsn, sqlitePath, port, work) {
  const cwd = join(work, 'gateway-cwd');
  mkdirSync(cwd, { recursive: true });
  // the same V8 flags and malloc settings as `npm start` (scripts/server-flags.mjs explains them)
  const child = spawn(
    process.execPath,
    [
      ...SERVER_NODE_FLAGS,
      ...(env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean),
      join(root, 'server/dist/index.js'),
    ],
    {
      cwd,
      env: {
        ...SERVER_ENV,
        ...env,
        PORT: String(port),
        SQLITE_PATH: sqlitePath,
        SESSION_SECRET: 'bench-secret',
        LOG_LEVEL: 'warn',
        SQL_DSN: dsn,
        REDIS_CONN_STRING: '',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  children.push(child);
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/status`);
      if (res.ok) return child;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('gateway did not start');
}

function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** CPU time (ms, user + system, all threads) a process has used so far (/proc/<pid>/stat), or NaN where there is none. */
function processCpuMs(pid) {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    // utime and stime, in clock ticks (100 a second on Linux)
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return NaN;
  }
}

/** The machine's cumulative CPU times (/proc/stat, all cores), or null where there is none. */
function cpuTimes() {
  try {
    const v = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    return { total: v.reduce((a, b) => a + b, 0), idle: v[3] + (v[4] ?? 0), steal: v[7] ?? 0 };
  } catch {
    return null;
  }
}

/** Idle and stolen shares (%) of the CPU time between two cpuTimes() readings. */
function cpuShares(a, b) {
  if (!a || !b || b.total <= a.total) return { idle: NaN, steal: NaN };
  const t = b.total - a.total;
  return { idle: (100 * (b.idle - a.idle)) / t, steal: (100 * (b.steal - a.steal)) / t };
}

const SYSTEM_PROMPT = 'You are a helpful assistant.';
const USER_PROMPT = 'Benchmark request body of a typical size. '.repeat(20);
const openaiBody = (stream, model = MODEL) =>
  JSON.stringify({
    model,
    stream,
    ...(MAX_TOKENS > 0 ? { max_tokens: MAX_TOKENS } : {}),
    messages: [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: USER_PROMPT },
    ],
  });
// the same conversation as a Claude client sends it: the system prompt beside the messages, max_tokens required
const claudeBody = (stream, model) =>
  JSON.stringify({
    model,
    max_tokens: MAX_TOKENS > 0 ? MAX_TOKENS : 1024,
    stream,
    system: SYSTEM_PROMPT,
    messages: [{ role: 'user', content: USER_PROMPT }],
  });

/**
 * A measured endpoint: its URL, the request body, the headers of request i (its credentials: the gateway's tokens in
 * turn) and the format it answers in. `key` names it for the wrk script cache.
 */
const target = (key, url, answer, payload, headersFor) => ({ key, url, answer, payload, headersFor });
const openaiAuth = (key) => ({ authorization: `Bearer ${key}` });
const claudeAuth = (key) => ({ 'x-api-key': key, 'anthropic-version': ANTHROPIC_VERSION });

/** Whether a whole answer looks complete, cheaply (the probe's check of every request). */
function looksComplete(answer, stream, text) {
  if (!stream) return text.includes('"usage"');
  return answer === 'claude' ? text.includes('event: message_stop') : text.includes('[DONE]');
}

async function setMockDelay(mockPort, delayMs) {
  await fetch(`${mockBase(mockPort)}/__mock/config`, { method: 'POST', body: JSON.stringify({ delayMs }) });
}

/** One connection, sequential requests: time to first byte and to last byte. */
async function probe({ url, payload, headersFor, answer }, stream) {
  const u = new URL(url);
  const proto = u.protocol === 'https:' ? https : http;
  const agent = new proto.Agent({ keepAlive: true, maxSockets: 1 });
  const once = (i) =>
    new Promise((resolve) => {
      const t0 = process.hrtime.bigint();
      let tFirst = 0n;
      const headers = {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
        ...headersFor(i),
      };
      const req = proto.request(
        { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers, agent },
        (res) => {
          let text = '';
          res.on('data', (c) => {
            if (!tFirst) tFirst = process.hrtime.bigint();
            text += c;
          });
          res.on('end', () => {
            const t1 = process.hrtime.bigint();
            const ok = res.statusCode === 200 && looksComplete(answer, stream, text);
            resolve({ ok, ttfb: Number(tFirst - t0) / 1e6, total: Number(t1 - t0) / 1e6, text });
          });
        },
      );
      req.on('error', (e) => resolve({ ok: false, text: e.message }));
      req.end(payload);
    });
  for (let i = 0; i < PROBE_WARMUP; i++) await once(i);
  const ttfb = [];
  const total = [];
  let bad = 0;
  let sample = '';
  for (let i = 0; i < PROBE_N; i++) {
    const r = await once(i);
    if (!r.ok) {
      bad++;
      sample ||= r.text?.slice(0, 200);
      continue;
    }
    ttfb.push(r.ttfb);
    total.push(r.total);
  }
  agent.destroy();
  const pct = (a, p) => {
    const s = [...a].sort((x, y) => x - y);
    return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
  };
  return {
    ttfbP50: pct(ttfb, 50),
    ttfbP99: pct(ttfb, 99),
    totalP50: pct(total, 50),
    totalP99: pct(total, 99),
    bad,
    sample,
  };
}

/**
 * A wrk script: POSTs `payload`, each request with the next of `headerSets` (the gateway's tokens in turn, as
 * autocannon's setupRequest does), and prints wrk's summary as one JSON line.
 */
function wrkScript(file, payload, headerSets) {
  const lua = (v) => `[==[${v}]==]`;
  const table = (h) =>
    `{ ${Object.entries(h)
      .map(([k, v]) => `[ ${lua(k)} ] = ${lua(v)}`)
      .join(', ')} }`;
  writeFileSync(
    file,
    `local body = ${lua(payload)}
local sets = { ${headerSets.map(table).join(', ')} }
local reqs = {}
local i = 0
function init(args)
  for k = 1, #sets do
    local h = { ["Content-Type"] = "application/json" }
    for name, value in pairs(sets[k]) do h[name] = value end
    reqs[k] = wrk.format("POST", nil, h, body)
  end
end
function request()
  i = i % #reqs + 1
  return reqs[i]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"us":%d,"errors":%d,"status":%d,"p50":%d,"p99":%d}\\n', summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99)))
end
`,
  );
  return file;
}

/** One wrk run: the same figures as autocannon's (RPS, p50/p99 in ms, errors incl. non-2xx). */
function wrk(url, script, connections) {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t1', `-c${connections}`, `-d${DURATION}s`, '--timeout', '10s', '-s', script, url], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('exit', () => {
      const m = /WRK_RESULT (\{.*\})/.exec(text);
      if (!m) return reject(new Error(`wrk printed no result: ${text.slice(0, 300)}`));
      const r = JSON.parse(m[1]);
      resolve({
        rps: r.requests / (r.us / 1e6),
        p50: Math.round(r.p50 / 1000),
        p99: Math.round(r.p99 / 1000),
        errors: r.errors + r.status,
        served: r.requests,
      });
    });
  });
}

const scripts = new Map();
let scriptDir = '';

/** One load run with the chosen generator: { rps, p50, p99 (ms), errors (incl. non-2xx), served }. */
async function generate({ key, url, payload, headersFor }, connections) {
  if (LOADGEN === 'wrk') {
    if (!scripts.has(key))
      scripts.set(
        key,
        wrkScript(
          join(scriptDir, `wrk-${scripts.size}.lua`),
          payload,
          Array.from({ length: N_TOKENS }, (_, i) => headersFor(i)),
        ),
      );
    return wrk(url, scripts.get(key), connections);
  }
  let i = 0;
  const result = await autocannon({
    url,
    connections,
    duration: DURATION,
    ...(RATE > 0 ? { overallRate: RATE } : {}),
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: payload,
        setupRequest: (req) => {
          req.headers = { ...req.headers, ...headersFor(i++) };
          return req;
        },
      },
    ],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    served: result.requests.total,
  };
}

/** A load run, with the machine's CPU shares, the measured process's RSS peak and its CPU per request served. */
async function load(tgt, connections, pid) {
  let peak = 0;
  const timer = pid ? setInterval(() => (peak = Math.max(peak, rssMb(pid))), 200) : null;
  const cpu0 = cpuTimes();
  const own0 = pid ? processCpuMs(pid) : NaN;
  const r = await generate(tgt, connections).finally(() => timer && clearInterval(timer));
  return {
    ...cpuShares(cpu0, cpuTimes()),
    ...r,
    rssPeak: peak,
    // µs of the measured process's CPU per request served
    cpuPerReq: pid && r.served > 0 ? (1000 * (processCpuMs(pid) - own0)) / r.served : NaN,
  };
}

const f = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
/** The item with the median key (the lower middle of an even count). */
const medianBy = (items, key) => [...items].sort((a, b) => key(a) - key(b))[Math.floor((items.length - 1) / 2)];

/** The run's database (SQLite in a temp dir, or BENCH_SQL_DSN's), seeded with channels pointing at `upstream`. */
async function seededDatabase(upstream) {
  const work = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  const sqlitePath = join(work, 'bench.db');
  const database = SQL_DSN ? await freshDatabase(SQL_DSN) : { label: 'SQLite', dsn: '', drop: async () => {} };
  dropDatabase = database.drop;
  const keys = await seed(database.dsn, sqlitePath, upstream);
  return { work, sqlitePath, database, keys };
}

/** BENCH_SERVE: the seeded gateway, for someone else's load generator, until SIGINT / SIGTERM. */
async function serve(upstream) {
  const { work, sqlitePath, database, keys } = await seededDatabase(upstream.replace(/\/+$/, ''));
  const port = Number(env.BENCH_PORT ?? 3300);
  const gw = await startGateway(database.dsn, sqlitePath, port, work);
  console.log(`GATEWAY_URL=http://127.0.0.1:${port}/v1\nGATEWAY_KEY=sk-${keys[0]}\nGATEWAY_PID=${gw.pid}`);
  console.error(`gateway on ${port} (${database.label}, channels at ${upstream}); Ctrl-C stops it`);
  process.removeAllListeners('SIGINT');
  await new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await stopAll();
  rmSync(work, { recursive: true, force: true });
}

/**
 * After the load table: each Claude cell's gateway/direct ratio against the matching OpenAI cell's, when both ran.
 * The goal: the native lane keeps at least 90 % of the OpenAI lane's share of direct RPS, the translated one half.
 */
function claudeSummary(cellRatios, out) {
  const rows = [];
  for (const delay of DELAYS)
    for (const mode of MODES) {
      const { versus, goal } = MODE_SPECS[mode];
      if (!versus) continue;
      for (const c of CONNS) {
        const claude = cellRatios.get(`${mode} ${delay} ${c}`);
        const openai = cellRatios.get(`${versus} ${delay} ${c}`);
        if (claude === undefined || openai === undefined) continue;
        const share = (100 * claude) / openai;
        rows.push(
          `| ${mode} | ${versus} | ${delay} ms | ${c} | ${f(claude, 1)} % | ${f(openai, 1)} % | **${f(share, 0)} %** | ≥ ${goal} %: ${share >= goal ? 'met' : 'not met'} |`,
        );
      }
    }
  if (!rows.length) return;
  out();
  out('## Claude lanes against the OpenAI lane');
  out();
  out(
    "Each Claude cell's gateway/direct ratio against the matching OpenAI cell's in this run (native: Claude direct; translated: the OpenAI direct). Goal: the native lane within 10 % of the OpenAI lane's share of direct RPS, the translated lane at least half of it.",
  );
  out();
  out(
    '| Claude mode | OpenAI mode | upstream delay | conns | Claude gateway/direct | OpenAI gateway/direct | Claude / OpenAI | goal |',
  );
  out('|---|---|---|---|---|---|---|---|');
  for (const row of rows) out(row);
}

async function main() {
  if (env.BENCH_SERVE) return serve(env.BENCH_SERVE);
  const mockPort = await startMock();
  const mockUrl = mockBase(mockPort);
  const { work, sqlitePath, database, keys } = await seededDatabase(mockUrl);
  const gwPort = await freePort();
  const gw = await startGateway(database.dsn, sqlitePath, gwPort, work);
  const gwBase = `http://127.0.0.1:${gwPort}`;
  const gwKey = (i) => `sk-${keys[i % keys.length]}`;
  // the floor relays Chat Completions only: started when an OpenAI-client mode runs
  const floor = FLOOR && MODES.some((m) => MODE_SPECS[m].client === 'openai') ? await startFloor(mockUrl) : null;
  scriptDir = work;
  /** direct, gateway and floor (null: none for this mode) targets of a mode */
  const targetsOf = (mode) => {
    const { client, direct, stream, model } = MODE_SPECS[mode];
    const kind = stream ? 'stream' : 'json';
    const claudeClient = client === 'claude';
    const gateway = claudeClient
      ? target(`gw-${mode}`, `${gwBase}/v1/messages`, 'claude', claudeBody(stream, model), (i) => claudeAuth(gwKey(i)))
      : target(`gw-${mode}`, `${gwBase}/v1/chat/completions`, 'openai', openaiBody(stream, model), (i) =>
          openaiAuth(gwKey(i)),
        );
    // the translated lane's direct is the OpenAI modes' own: one cache key, one wrk script
    const directTarget =
      direct === 'claude'
        ? target(`direct-claude-${kind}`, `${mockUrl}/v1/messages`, 'claude', claudeBody(stream, model), () =>
            claudeAuth('sk-ant-upstream'),
          )
        : target(`direct-openai-${kind}`, `${mockUrl}/v1/chat/completions`, 'openai', openaiBody(stream), () =>
            openaiAuth('sk-upstream'),
          );
    const floorTarget =
      floor && !claudeClient
        ? target(
            `floor-${kind}`,
            `http://127.0.0.1:${floor.port}/v1/chat/completions`,
            'openai',
            openaiBody(stream),
            () => openaiAuth('sk-upstream'),
          )
        : null;
    return { direct: directTarget, gateway, floor: floorTarget };
  };

  // every mode's direct and gateway answer read whole and checked before anything is measured; the native lane
  // passes the mock's bytes through, so its events must be the mock's, and every lane must carry the mock's text
  for (const mode of MODES) {
    const { stream, client, direct: directFormat } = MODE_SPECS[mode];
    const { direct, gateway } = targetsOf(mode);
    const answer = async (t) => {
      const res = await fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...t.headersFor(0) },
        body: t.payload,
      });
      try {
        return checkAnswer(t.answer, stream, res.status, await res.text());
      } catch (e) {
        throw new Error(`${mode}: ${t === gateway ? 'the gateway' : 'the mock'}'s answer: ${e.message}`);
      }
    };
    const d = await answer(direct);
    const g = await answer(gateway);
    if (!d.text || g.text !== d.text)
      throw new Error(
        `${mode}: the gateway's text ${JSON.stringify(g.text)} is not the mock's ${JSON.stringify(d.text)}`,
      );
    if (client === directFormat && g.events.join() !== d.events.join())
      throw new Error(
        `${mode}: the gateway's events (${g.events.join(', ')}) are not the mock's (${d.events.join(', ')})`,
      );
  }
  const idleRss = rssMb(gw.pid);

  const lines = [];
  const out = (s = '') => {
    lines.push(s);
    console.log(s);
  };
  out(`# Gateway benchmark — ${new Date().toISOString()}`);
  out();
  out(
    `Node ${process.version}, ${(await import('node:os')).cpus().length} cores; ${N_TOKENS} tokens, ${Math.max(N_CHANNELS, 2 * HOT_CHANNELS)} channels (${HOT_CHANNELS} of them Anthropic; ${database.label}); ${ROUNDS} × ${DURATION} s per load cell and target; load generator ${LOADGEN === 'wrk' ? 'wrk (1 thread, its own process)' : 'autocannon in-process'}${MAX_TOKENS > 0 ? `; bodies set max_tokens ${MAX_TOKENS}` : ''}${RATE > 0 ? `; every load measurement at a fixed ${RATE} requests/s` : ''}${TLS ? '; upstream over https (BENCH_TLS)' : ''}.`,
  );
  out();

  await setMockDelay(mockPort, 0);
  out(
    `## Unloaded probe (1 connection, 0 ms upstream; ${PROBE_N} sequential requests after ${PROBE_WARMUP} warm-up ones)`,
  );
  out();
  out(
    '| mode | direct ttfb p50 | gateway ttfb p50 | added p50 (ms) | direct ttfb p99 | gateway ttfb p99 | added p99 (ms) | added total p50 (ms) | floor added p50 / p99 (ms) | CPU stolen (%) | bad |',
  );
  out('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const mode of MODES) {
    const { stream } = MODE_SPECS[mode];
    const targets = targetsOf(mode);
    const cpu0 = cpuTimes();
    const d = await probe(targets.direct, stream);
    const g = await probe(targets.gateway, stream);
    const { steal } = cpuShares(cpu0, cpuTimes());
    const fl = targets.floor && (await probe(targets.floor, stream));
    out(
      `| ${mode} | ${f(d.ttfbP50, 3)} | ${f(g.ttfbP50, 3)} | **${f(g.ttfbP50 - d.ttfbP50, 3)}** | ${f(d.ttfbP99, 3)} | ${f(g.ttfbP99, 3)} | **${f(g.ttfbP99 - d.ttfbP99, 3)}** | ${f(g.totalP50 - d.totalP50, 3)} | ${fl ? `${f(fl.ttfbP50 - d.ttfbP50, 3)} / ${f(fl.ttfbP99 - d.ttfbP99, 3)}` : 'n/a'} | ${f(steal, 1)} | ${g.bad}${g.sample ? ` (${g.sample})` : ''} |`,
    );
  }
  out();
  out(`## Load (${LOADGEN})`);
  out();
  out(
    `Each cell: ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of direct then gateway${floor ? ' then floor' : ''}, ${DURATION} s each; the row is the round with the median gateway/direct ratio (all rounds' ratios listed), errors summed and RSS the maximum over the rounds. CPU idle / stolen: the machine's, during the direct and the gateway measurement of each round.${floor ? " Floor: bench/floor-relay.mjs, the least a relay on this stack does (no auth, billing or logs), against the same round's direct RPS; the median of the rounds, then every round (OpenAI modes only: it relays Chat Completions)." : ''}`,
  );
  out();
  out(
    '| mode | upstream delay | conns | direct RPS | gateway RPS | gateway/direct | every round (%) | floor/direct (%) | direct p50/p99 (ms) | gateway p50/p99 (ms) | gateway errors | gateway peak RSS (MB) | gateway CPU per request (µs, every round) | CPU idle, direct/gateway (%) | CPU stolen, direct/gateway (%) |',
  );
  out('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  let peak128 = 0;
  let ran128 = false;
  /** each cell's median gateway/direct ratio (%), by `${mode} ${delay} ${conns}`: the Claude summary reads them */
  const cellRatios = new Map();
  for (const delay of DELAYS) {
    await setMockDelay(mockPort, delay);
    for (const mode of MODES) {
      const targets = targetsOf(mode);
      for (const c of CONNS) {
        // direct and gateway back to back, ROUNDS times: the row shows the round with the median ratio, so a slow
        // spell of the machine during one measurement does not decide the cell
        const rounds = [];
        for (let r = 0; r < ROUNDS; r++) {
          const d = await load(targets.direct, c);
          const g = await load(targets.gateway, c, gw.pid);
          const fl = targets.floor && (await load(targets.floor, c));
          rounds.push({ d, g, ratio: (100 * g.rps) / d.rps, floorRatio: fl ? (100 * fl.rps) / d.rps : NaN });
        }
        const floorRatios = rounds.map((r) => r.floorRatio);
        const floorCol = targets.floor
          ? `${f(
              medianBy(floorRatios, (x) => x),
              1,
            )}: ${floorRatios.map((x) => f(x, 1)).join(' / ')}`
          : 'n/a';
        const { d, g, ratio } = medianBy(rounds, (r) => r.ratio);
        cellRatios.set(`${mode} ${delay} ${c}`, ratio);
        const errors = rounds.reduce((n, r) => n + r.g.errors, 0);
        const rss = Math.max(...rounds.map((r) => r.g.rssPeak));
        if (c >= 128) {
          ran128 = true;
          peak128 = Math.max(peak128, rss);
        }
        out(
          `| ${mode} | ${delay} ms | ${c} | ${f(d.rps, 0)} | ${f(g.rps, 0)} | **${f(ratio, 1)} %** | ${rounds.map((r) => f(r.ratio, 1)).join(' / ')} | ${floorCol} | ${d.p50}/${d.p99} | ${g.p50}/${g.p99} | ${errors} | ${rss} | ${rounds.map((r) => f(r.g.cpuPerReq, 0)).join(' / ')} | ${rounds.map((r) => `${f(r.d.idle, 0)}/${f(r.g.idle, 0)}`).join(' ')} | ${rounds.map((r) => `${f(r.d.steal, 0)}/${f(r.g.steal, 0)}`).join(' ')} |`,
        );
      }
    }
  }
  claudeSummary(cellRatios, out);
  out();
  out(
    `Gateway RSS: idle ${idleRss} MB after warm-up start, ${ran128 ? `peak ${peak128} MB during the 128-connection runs` : 'no 128-connection runs'}.`,
  );
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  const file = join(root, 'bench/results', `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
  writeFileSync(file, lines.join('\n') + '\n');
  console.log(`\nwritten to ${file}`);
  await stopAll();
  rmSync(work, { recursive: true, force: true });
}

main().catch(async (err) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});
