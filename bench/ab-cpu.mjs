// Two builds side by side (docs/perf/budget-reservations.md): AB_BASE and AB_HEAD are two checkouts, each built
// (`npm run build -w server` there) with node_modules; each serves a gateway seeded by its own bench/run.mjs
// (BENCH_SERVE) on one mock upstream, and autocannon runs alternate between them and a direct call to the mock (base,
// head, direct; the order rotated every round). Reports each side's CPU time per request (all threads,
// /proc/<pid>/stat), RPS, its share of the same round's direct RPS and peak RSS (VmHWM), and the head/base ratio per
// pair of runs.
// Env: CASE (none | budget: every token gets a daily budget far above what the run spends, so the budget is counted
// on every request but never refuses), RATE (requests per second; empty: as many as the connections manage), ROUNDS
// (6), DURATION (s per run, 6), WARMUP (s of load on each side before the first round, 4), CONNS (32), MODE (json |
// stream: the OpenAI chat request whole or streamed; claude-json: an Anthropic Messages client on an Anthropic
// channel (type 14) that this script adds to each gateway's database, direct = the same Claude request to the mock;
// claude-x-json: that client naming gpt-4o-mini, served by the seed's OpenAI channels (the translated lane), direct =
// the OpenAI json request), BENCH_SQL_DSN (passed through to both run.mjs: each creates a database of its own on
// that PostgreSQL server; this script then writes its rows there), PROBE=1 (checks that the budget settings are
// loaded: a token with a budget of 1 quota is refused its second request). Linux only (/proc).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { checkAnswer } from './answer-check.mjs';
const require = createRequire(import.meta.url);
const dirs = { base: process.env.AB_BASE, head: process.env.AB_HEAD };
if (!dirs.base || !dirs.head) throw new Error('AB_BASE and AB_HEAD: two built checkouts');
const autocannon = require('autocannon');

const CASE = process.env.CASE ?? 'none';
const MODE = process.env.MODE ?? 'json';
const MODES = ['json', 'stream', 'claude-json', 'claude-x-json'];
if (!MODES.includes(MODE)) throw new Error(`MODE: one of ${MODES.join(', ')}`);
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const DURATION = Number(process.env.DURATION ?? 6);
const WARMUP = Number(process.env.WARMUP ?? 4);
const CONNS = Number(process.env.CONNS ?? 32);
const TOKENS = 10;
// the native lane's model (a default ratio at every commit since the Claude relay); the translated lane names the
// OpenAI model the seed's OpenAI channels serve at every commit, so it needs no channel of its own
const MODEL = 'gpt-4o-mini';
const CLAUDE_MODEL = 'claude-3-5-haiku-20241022';
const children = [];
const lineOf = (child, re) =>
  new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
      const m = re.exec(text);
      if (m) resolve(m);
    });
    child.on('exit', (c) => reject(new Error(`exited ${c}: ${text}`)));
  });

const mock = spawn(process.execPath, [new URL('./mock-upstream.mjs', import.meta.url).pathname], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
children.push(mock);
const mockPort = (await lineOf(mock, /MOCK_PORT=(\d+)/))[1];
const mockUrl = `http://127.0.0.1:${mockPort}`;
const stop = () => children.forEach((c) => c.exitCode === null && c.signalCode === null && c.kill('SIGTERM'));
process.on('exit', stop);

async function gateway(name, port) {
  const child = spawn(process.execPath, [`${dirs[name]}/bench/run.mjs`], {
    cwd: dirs[name],
    env: {
      ...process.env,
      BENCH_SERVE: mockUrl,
      BENCH_PORT: String(port),
      BENCH_TOKENS: String(TOKENS),
      SYNC_FREQUENCY: '3',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const m = await lineOf(child, /GATEWAY_PID=(\d+)/);
  const pid = Number(m[1]);
  // the database run.mjs gave the gateway: SQL_DSN (BENCH_SQL_DSN's fresh database) or else its SQLite file
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const envOf = (k) => (environ.find((l) => l.startsWith(`${k}=`)) ?? '').slice(k.length + 1);
  return { name, port, pid, child, dsn: envOf('SQL_DSN'), sqlite: envOf('SQLITE_PATH') };
}
/** A port free right now (another bench:ab may be running on this machine: no fixed ports). */
const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
const gws = [await gateway('base', await freePort()), await gateway('head', await freePort())];
if (gws[0].dsn && gws[0].dsn === gws[1].dsn) throw new Error(`both gateways on one database: ${gws[0].dsn}`);
/**
 * Stops the gateways too (their BENCH_SERVE parents may exit first), waits until their ports are free and every
 * run.mjs has exited (with BENCH_SQL_DSN it drops its database once its gateway has stopped), and exits.
 */
async function shutdown(code) {
  const gone = (pid) => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  };
  for (const g of gws) if (!gone(g.pid)) process.kill(g.pid, 'SIGTERM');
  stop();
  const done = () =>
    gws.every((g) => gone(g.pid)) && children.every((c) => c.exitCode !== null || c.signalCode !== null);
  for (let i = 0; i < 150 && !done(); i++) await new Promise((r) => setTimeout(r, 200));
  process.exit(code);
}
const dbLabel = (g) => {
  if (!g.dsn) return 'SQLite';
  const u = new URL(g.dsn);
  return `${/^postgres/.test(u.protocol) ? 'PostgreSQL' : u.protocol.replace(/:$/, '')} ${u.host}`;
};
const keys = Array.from({ length: TOKENS }, (_, i) => `sk-${`bench${String(i).padStart(6, '0')}`.padEnd(48, 'x')}`);

/**
 * A gateway's database, for this script's own rows: `run(sql, params)` with `?` placeholders (numbered for
 * PostgreSQL), `all(sql, params)`, `close()`. pg for a PostgreSQL DSN, better-sqlite3 for the SQLite file.
 */
async function openDb(g, { readonly = false } = {}) {
  if (!g.dsn) {
    const Database = require('better-sqlite3');
    const db = new Database(g.sqlite, { readonly });
    return {
      all: async (sql, params = []) => db.prepare(sql).all(...params),
      run: async (sql, params = []) => void db.prepare(sql).run(...params),
      close: async () => db.close(),
    };
  }
  if (!/^postgres(ql)?:\/\//.test(g.dsn)) throw new Error(`BENCH_SQL_DSN: PostgreSQL only here, not ${g.dsn}`);
  const pg = require('pg');
  const client = new pg.Client({ connectionString: g.dsn });
  await client.connect();
  const numbered = (sql) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  const all = async (sql, params = []) => (await client.query(numbered(sql), params)).rows;
  return { all, run: async (sql, params) => void (await all(sql, params)), close: () => client.end() };
}

// what each MODE sends: to the gateways, and directly to the mock (the share of direct's denominator)
const SAY = 'Say hello in one short sentence.';
const openaiBody = (stream) =>
  JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: SAY }], ...(stream ? { stream: true } : {}) });
const claudeBody = (model) =>
  JSON.stringify({
    model,
    max_tokens: 256,
    system: 'You are a helpful assistant.',
    messages: [{ role: 'user', content: SAY }],
  });
const openai = (stream) => ({
  path: '/v1/chat/completions',
  answer: 'openai',
  stream,
  body: openaiBody(stream),
  auth: (key) => ({ authorization: `Bearer ${key}` }),
});
const claude = (model) => ({
  path: '/v1/messages',
  answer: 'claude',
  stream: false,
  body: claudeBody(model),
  auth: (key) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' }),
});
const SPECS = {
  json: { client: openai(false), direct: openai(false) },
  stream: { client: openai(true), direct: openai(true) },
  'claude-json': { client: claude(CLAUDE_MODEL), direct: claude(CLAUDE_MODEL), anthropicChannel: true },
  'claude-x-json': { client: claude(MODEL), direct: openai(false) },
};
const spec = SPECS[MODE];
const body = spec.client.body;
// the mock wants a key (x-api-key on /v1/messages); the channels' keys
const directKeys = [spec.direct.answer === 'claude' ? 'sk-ant-upstream' : 'sk-upstream'];
const direct = { name: 'direct', port: Number(mockPort), pid: 0, spec: spec.direct, keys: directKeys };
for (const g of gws) Object.assign(g, { spec: spec.client, keys });

if (spec.anthropicChannel) {
  // the seed of an old base has no Anthropic channel: one for the native lane, in each gateway's database
  for (const g of gws) {
    const db = await openDb(g);
    const name = 'ab-anthropic';
    await db.run(
      'insert into channels (type, key, name, base_url, models, "group", status, created_time) values (14, ?, ?, ?, ?, ?, 1, ?)',
      ['sk-ant-upstream', name, mockUrl, CLAUDE_MODEL, 'default', Math.floor(Date.now() / 1000)],
    );
    const [{ id }] = await db.all('select id from channels where name = ?', [name]);
    await db.run('insert into abilities ("group", model, channel_id) values (?, ?, ?)', ['default', CLAUDE_MODEL, id]);
    await db.close();
  }
}

/** Exits with a line ab.mjs prints as the cell's row: `side` cannot serve this cell, for want of `what`. */
async function unsupported(side, what, detail) {
  console.error(`${MODE} ${CASE}: the ${side} gateway has no ${what} (${detail})`);
  console.log(`UNSUPPORTED ${side} ${what}`);
  await shutdown(3);
}

/** One request of the side `t` read whole and checked (status 200, its format's fields, the mock's text). */
async function answerOf(t) {
  const res = await fetch(`http://127.0.0.1:${t.port}${t.spec.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...t.spec.auth(t.keys[0]) },
    body: t.spec.body,
  });
  // a build from before the Claude relay (de736cd) has no /v1/messages: its router answers 404 "Invalid URL"
  if (res.status === 404 && t.pid) throw Object.assign(new Error(`404 ${await res.text()}`), { noRoute: true });
  return checkAnswer(t.spec.answer, t.spec.stream, res.status, await res.text());
}
// every side answers before anything is measured: the channel cache reloads every SYNC_FREQUENCY (3 s), so a channel
// added above is routed within a few seconds; 15 s without a right answer fails the run
const expected = (await answerOf(direct)).text;
for (const g of gws) {
  for (let tries = 0; ; tries++) {
    try {
      const { text } = await answerOf(g);
      if (text !== expected)
        throw new Error(`text ${JSON.stringify(text)}, not the mock's ${JSON.stringify(expected)}`);
      break;
    } catch (e) {
      // not this cell's to measure: ab.mjs prints it as such and goes on with the other cells
      if (e.noRoute) await unsupported(g.name, g.spec.path, e.message);
      if (tries >= 30) throw new Error(`${MODE}: the ${g.name} gateway's answer: ${e.message}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

if (CASE === 'budget') {
  for (const g of gws) {
    const db = await openDb(g);
    const ids = (await db.all('select id from tokens')).map((r) => r.id);
    try {
      for (const id of ids)
        await db.run("insert into usage_limits (scope, target_id, limits) values ('token', ?, ?)", [
          id,
          JSON.stringify({ budget: 1e15, period: 'daily' }),
        ]);
    } catch (e) {
      // a build from before budgets has no such table
      if (/no such table|does not exist/.test(e.message)) await unsupported(g.name, 'usage_limits table', e.message);
      throw e;
    } finally {
      await db.close();
    }
  }
  // the limits reload every SYNC_FREQUENCY (3 s); check one refusal-free request each and wait for the reload
  await new Promise((r) => setTimeout(r, 7000));
}
if (process.env.PROBE) {
  // proof the rules are loaded: token 10 gets a budget of 1 quota; its second request must be refused
  for (const g of gws) {
    const db = await openDb(g);
    await db.run("delete from usage_limits where scope = 'token' and target_id = 10");
    await db.run("insert into usage_limits (scope, target_id, limits) values ('token', 10, ?)", [
      JSON.stringify({ budget: 1, period: 'daily' }),
    ]);
    await db.close();
  }
  await new Promise((r) => setTimeout(r, 7000));
  for (const g of gws) {
    const st = [];
    for (let i = 0; i < 2; i++)
      st.push(
        (
          await fetch(`http://127.0.0.1:${g.port}${spec.client.path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...spec.client.auth(keys[9]) },
            body,
          })
        ).status,
      );
    console.log('PROBE', g.name, st);
  }
}

/** CPU ms (user + system, 100 Hz ticks) of a process (all its threads), or of one thread with `tid` */
const cpu = (pid, tid) => {
  const stat = readFileSync(tid ? `/proc/${pid}/task/${tid}/stat` : `/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const hwm = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
/** Sets a process's VmHWM back to its current RSS (Linux: `5` to clear_refs), so that each run reads its own peak. */
const resetPeak = (pid) => {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    /* an older kernel: the peaks stay cumulative, and the per-run median is then the run-so-far peak */
  }
};

/** One autocannon run against a side: a gateway (its CPU time read before and after) or the mock directly. */
async function load(t, seconds) {
  let k = 0;
  const before = t.pid ? cpu(t.pid) : 0;
  // the main thread's share (its thread id is the pid): the rest is the log worker, GC helpers and libuv's pool
  const mainBefore = t.pid ? cpu(t.pid, t.pid) : 0;
  if (t.pid) resetPeak(t.pid);
  const r = await autocannon({
    url: `http://127.0.0.1:${t.port}${t.spec.path}`,
    method: 'POST',
    connections: CONNS,
    duration: seconds,
    ...(process.env.RATE ? { overallRate: Number(process.env.RATE) } : {}),
    body: t.spec.body,
    headers: { 'content-type': 'application/json' },
    setupClient: (c) =>
      c.setHeaders({ 'content-type': 'application/json', ...t.spec.auth(t.keys[k++ % t.keys.length]) }),
  });
  const ms = t.pid ? cpu(t.pid) - before : NaN;
  const mainMs = t.pid ? cpu(t.pid, t.pid) - mainBefore : NaN;
  // the peak of this run; the whole run's peak is the largest of them (the start and seeding peak lower)
  const peak = t.pid ? hwm(t.pid) : NaN;
  if (t.pid) t.peak = Math.max(t.peak ?? 0, peak);
  const n = r.requests.total;
  return {
    n,
    non2xx: r.non2xx,
    errors: r.errors,
    rps: r.requests.average,
    cpuUs: (ms * 1000) / n,
    mainUs: (mainMs * 1000) / n,
    peak,
  };
}

const sides = [...gws, direct];
for (const t of sides) await load(t, WARMUP);
const results = { base: [], head: [], direct: [] };
for (let i = 0; i < ROUNDS; i++) {
  // base, head, direct; then head, direct, base; …: each side first, second and last in turn
  const order = sides.map((_, j) => sides[(i + j) % sides.length]);
  for (const t of order) {
    const r = await load(t, DURATION);
    results[t.name].push(r);
    if (!t.pid) {
      console.log(JSON.stringify({ round: i, gw: t.name, ...r, cpuUs: undefined, peak: undefined }));
      continue;
    }
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${t.pid}/status`, 'utf8'))[1]) / 1024;
    console.log(
      JSON.stringify({
        round: i,
        gw: t.name,
        ...r,
        peak: undefined,
        cpuUs: +r.cpuUs.toFixed(1),
        mainUs: +r.mainUs.toFixed(1),
        rss: +rss.toFixed(1),
        hwm: +r.peak.toFixed(1),
      }),
    );
  }
}
if (CASE === 'budget') {
  // the budget counted: the consume logs written on each
  for (const g of gws) {
    const db = await openDb(g, { readonly: true });
    console.log(g.name, 'logs', (await db.all('select count(*) n, sum(quota) q from logs'))[0]);
    await db.close();
  }
}
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const summary = { database: dbLabel(gws[0]) };
for (const g of gws)
  summary[g.name] = {
    cpuUsMedian: med(results[g.name].map((r) => r.cpuUs)),
    mainUsMedian: med(results[g.name].map((r) => r.mainUs)),
    rpsMedian: med(results[g.name].map((r) => r.rps)),
    // RPS as a share of the direct run of the same round, the median of the rounds
    directShareMedian: med(results[g.name].map((r, i) => r.rps / results.direct[i].rps)),
    peakRssMB: g.peak,
    // each run's own peak, the median of the runs: the GC's saw-tooth puts one run's peak 10 MB above the others now
    // and then, on either side, and the largest alone follows that
    runPeakRssMedianMB: med(results[g.name].map((r) => r.peak)),
    errors: results[g.name].reduce((n, r) => n + r.non2xx + r.errors, 0),
  };
summary.direct = {
  rpsMedian: med(results.direct.map((r) => r.rps)),
  errors: results.direct.reduce((n, r) => n + r.non2xx + r.errors, 0),
};
summary.ratio = summary.head.cpuUsMedian / summary.base.cpuUsMedian;
const pairs = results.base.map((b, i) => results.head[i].cpuUs / b.cpuUs);
summary.pairRatios = pairs.map((x) => +x.toFixed(3));
summary.pairMedian = med(pairs);
console.log('SUMMARY', CASE, process.env.RATE ?? 'max', MODE, JSON.stringify(summary));
await shutdown(0);
