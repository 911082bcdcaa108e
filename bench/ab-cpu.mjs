// Two builds side by side (docs/perf/budget-reservations.md): AB_BASE and AB_HEAD are two checkouts, each built
// (`npm run build -w server` there) with node_modules; each serves a gateway seeded by its own bench/run.mjs
// (BENCH_SERVE) on one mock upstream, and autocannon runs alternate between them. Reports each side's CPU time per
// request (all threads, /proc/<pid>/stat), RPS and peak RSS (VmHWM), and the head/base ratio per pair of runs.
// Env: CASE (none | budget: every token gets a daily budget far above what the run spends, so the budget is counted
// on every request but never refuses), RATE (requests per second; empty: as many as the connections manage), ROUNDS
// (6), DURATION (s per run, 6), CONNS (32), MODE (json | stream: the OpenAI chat request whole or streamed), PROBE=1 (checks that the budget settings are loaded: a token with a budget
// of 1 quota is refused its second request). Linux only (/proc).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const dirs = { base: process.env.AB_BASE, head: process.env.AB_HEAD };
if (!dirs.base || !dirs.head) throw new Error('AB_BASE and AB_HEAD: two built checkouts');
const autocannon = require('autocannon');
const Database = require('better-sqlite3');

const CASE = process.env.CASE ?? 'none';
const MODE = process.env.MODE ?? 'json';
if (MODE !== 'json' && MODE !== 'stream') throw new Error('MODE: json or stream');
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const DURATION = Number(process.env.DURATION ?? 6);
const CONNS = Number(process.env.CONNS ?? 32);
const TOKENS = 10;
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
const stop = () => children.forEach((c) => c.kill('SIGTERM'));
process.on('exit', stop);

async function gateway(name, port) {
  const child = spawn(process.execPath, [`${dirs[name]}/bench/run.mjs`], {
    cwd: dirs[name],
    env: {
      ...process.env,
      BENCH_SERVE: `http://127.0.0.1:${mockPort}`,
      BENCH_PORT: String(port),
      BENCH_TOKENS: String(TOKENS),
      SYNC_FREQUENCY: '3',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const m = await lineOf(child, /GATEWAY_PID=(\d+)/);
  const pid = Number(m[1]);
  const sqlite = readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .find((l) => l.startsWith('SQLITE_PATH='))
    .slice(12);
  return { name, port, pid, sqlite };
}
const gws = [await gateway('base', 3311), await gateway('head', 3312)];
const keys = Array.from({ length: TOKENS }, (_, i) => `sk-${`bench${String(i).padStart(6, '0')}`.padEnd(48, 'x')}`);

const body = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
  ...(MODE === 'stream' ? { stream: true } : {}),
});
if (CASE === 'budget') {
  for (const g of gws) {
    const db = new Database(g.sqlite);
    const ids = db
      .prepare('select id from tokens')
      .all()
      .map((r) => r.id);
    const ins = db.prepare("insert into usage_limits (scope, target_id, limits) values ('token', ?, ?)");
    for (const id of ids) ins.run(id, JSON.stringify({ budget: 1e15, period: 'daily' }));
    db.close();
  }
  // the limits reload every SYNC_FREQUENCY (3 s); check one refusal-free request each and wait for the reload
  await new Promise((r) => setTimeout(r, 7000));
}
if (process.env.PROBE) {
  // proof the rules are loaded: token 10 gets a budget of 1 quota; its second request must be refused
  for (const g of gws) {
    const db = new Database(g.sqlite);
    db.prepare("delete from usage_limits where scope = 'token' and target_id = 10").run();
    db.prepare("insert into usage_limits (scope, target_id, limits) values ('token', 10, ?)").run(
      JSON.stringify({ budget: 1, period: 'daily' }),
    );
    db.close();
  }
  await new Promise((r) => setTimeout(r, 7000));
  for (const g of gws) {
    const st = [];
    for (let i = 0; i < 2; i++)
      st.push(
        (
          await fetch(`http://127.0.0.1:${g.port}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${keys[9]}` },
            body,
          })
        ).status,
      );
    console.log('PROBE', g.name, st);
  }
}

const cpu = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // ms (100 Hz)
};
const hwm = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function load(g, seconds) {
  let k = 0;
  const before = cpu(g.pid);
  const r = await autocannon({
    url: `http://127.0.0.1:${g.port}/v1/chat/completions`,
    method: 'POST',
    connections: CONNS,
    duration: seconds,
    ...(process.env.RATE ? { overallRate: Number(process.env.RATE) } : {}),
    body,
    headers: { 'content-type': 'application/json' },
    setupClient: (c) =>
      c.setHeaders({ 'content-type': 'application/json', authorization: `Bearer ${keys[k++ % keys.length]}` }),
  });
  const ms = cpu(g.pid) - before;
  const n = r.requests.total;
  return { n, non2xx: r.non2xx, errors: r.errors, rps: r.requests.average, cpuUs: (ms * 1000) / n };
}

for (const g of gws) await load(g, 4); // warm-up
const results = { base: [], head: [] };
for (let i = 0; i < ROUNDS; i++) {
  const order = i % 2 ? [gws[1], gws[0]] : gws;
  for (const g of order) {
    const r = await load(g, DURATION);
    results[g.name].push(r);
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${g.pid}/status`, 'utf8'))[1]) / 1024;
    console.log(
      JSON.stringify({
        round: i,
        gw: g.name,
        ...r,
        cpuUs: +r.cpuUs.toFixed(1),
        rss: +rss.toFixed(1),
        hwm: +hwm(g.pid).toFixed(1),
      }),
    );
  }
}
if (CASE === 'budget') {
  // the budget counted: the status of the first token on each
  for (const g of gws) {
    const db = new Database(g.sqlite, { readonly: true });
    console.log(g.name, 'logs', db.prepare('select count(*) n, sum(quota) q from logs').get());
    db.close();
  }
}
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const summary = {};
for (const g of gws)
  summary[g.name] = {
    cpuUsMedian: med(results[g.name].map((r) => r.cpuUs)),
    rpsMedian: med(results[g.name].map((r) => r.rps)),
    peakRssMB: hwm(g.pid),
    errors: results[g.name].reduce((n, r) => n + r.non2xx + r.errors, 0),
  };
summary.ratio = summary.head.cpuUsMedian / summary.base.cpuUsMedian;
const pairs = results.base.map((b, i) => results.head[i].cpuUs / b.cpuUs);
summary.pairRatios = pairs.map((x) => +x.toFixed(3));
summary.pairMedian = med(pairs);
console.log('SUMMARY', CASE, process.env.RATE ?? 'max', MODE, JSON.stringify(summary));
// the gateways too (their BENCH_SERVE parents may exit first), and wait until their ports are free
for (const g of gws) process.kill(g.pid, 'SIGTERM');
stop();
for (const g of gws)
  for (let alive = true; alive;) {
    await new Promise((r) => setTimeout(r, 200));
    try {
      process.kill(g.pid, 0);
    } catch {
      alive = false;
    }
  }
process.exit(0);
