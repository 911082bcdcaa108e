// `AB_PROFILE=1 npm run bench:ab -- <base-ref>`: where each side's time and memory go (docs/perf/bench-ab.md). Both
// builds (AB_BASE, AB_HEAD: built checkouts, as for bench/ab-cpu.mjs) serve the same fixed load one after the other
// (RATE requests per second, so that both do the same work on an equally busy machine; MODE json | stream; DURATION
// seconds after a warm-up of the same rate) with --cpu-prof and --heapsnapshot-signal; then this prints, per side:
// CPU µs per request of the main thread by part of the request (the profile's samples inside the measured window,
// each given to the nearest frame of ours up its stack), and the live heap after a full GC at steady state (what a
// heap snapshot holds: total, strings, code, the ES modules loaded). The profiler adds its own cost to both sides.
// Linux only (/proc). Env: RATE (2000), DURATION (10), MODE (json), AB_PROFILE_DIR (where the profiles stay).
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const autocannon = require('autocannon');
const dirs = { base: process.env.AB_BASE, head: process.env.AB_HEAD };
if (!dirs.base || !dirs.head) throw new Error('AB_BASE and AB_HEAD: two built checkouts');
const RATE = Number(process.env.RATE || 2000);
const DURATION = Number(process.env.DURATION ?? 10);
const MODE = process.env.MODE ?? 'json';
const OUT = process.env.AB_PROFILE_DIR ?? join(tmpdir(), 'gateway-bench-ab', 'profiles');
const TOKENS = 10;
const keys = Array.from({ length: TOKENS }, (_, i) => `sk-${`bench${String(i).padStart(6, '0')}`.padEnd(48, 'x')}`);
const body = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
  ...(MODE === 'stream' ? { stream: true } : {}),
});

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
const freePort = () =>
  new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Parts of a relay request, by the file of the nearest frame of ours (server/dist/…) or the function's name. */
const PARTS = [
  [/lean-http\/(front|head|response|write|server)|fast-path|request-id|response-headers|security-headers/, 'front'],
  [/relay\/auth|pipeline\/authenticate|token-cache|user-cache|admit|rate-limit/, 'admission'],
  [/services\/limits\/|pipeline\/limit|channel-cap/, 'limits'],
  [/metrics|pipeline\/observe|tracing/, 'metrics'],
  [/pipeline\/parse|pipeline\/validate|relay\/formats\/|relay\/modes\/|hub/, 'parse'],
  [/pipeline\/route|channel-cache|pipeline\/price|pricing|services\/options/, 'routing'],
  [
    /lean-http\/client|upstream-call|transport|providers\/|relay\/attempt|pipeline\/attempts|keepalive|relay\/stream/,
    'upstream',
  ],
  [/relay\/usage|tokenizer/, 'usage'],
  [/billing|quota-holds|quota-data|pipeline\/reserve|pipeline\/settle|sqlite-write-lock|better-sqlite3/, 'settlement'],
  [/consume-log|log-writer|pipeline\/log|sqlite-worker\.js|internal\/worker/, 'log row'],
  [/pipeline\/run|relay\/engine|relay\/services/, 'glue'],
];
const PART_NAMES = {
  front: 'front: request read, answer written (socket writes included)',
  admission: 'admission: key, user, rate limits',
  limits: 'usage limits, channel caps',
  metrics: 'metrics, tracing',
  parse: 'body parsed and checked (hub)',
  routing: 'routing, pricing, options',
  upstream: 'the upstream call',
  usage: 'usage read',
  settlement: 'reservation, settlement (SQLite)',
  'log row': 'the log row, built and posted',
  glue: 'pipeline glue',
  gc: 'GC',
  program: '(program): V8 and native, unattributed',
  node: 'Node internals outside our frames',
};

/** µs per request of the main thread by part, from a .cpuprofile, counting samples between t0 and t1 (µs). */
function parts(file, t0, t1, n) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(p.nodes.map((x) => [x.id, x]));
  const parent = new Map();
  for (const x of p.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
  const memo = new Map();
  const partOf = (id) => {
    if (memo.has(id)) return memo.get(id);
    let part = 'node';
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = nodes.get(cur).callFrame;
      if (cf.functionName === '(garbage collector)') part = 'gc';
      else if (cf.functionName === '(program)') part = 'program';
      else if (cf.functionName === '(idle)') part = null;
      else {
        const where = `${cf.url} ${cf.functionName}`;
        const hit = PARTS.find(([re]) => re.test(where));
        if (!hit) continue;
        part = hit[1];
      }
      break;
    }
    memo.set(id, part);
    return part;
  };
  const tally = {};
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    if (t < t0 || t > t1) continue;
    const part = partOf(p.samples[i]);
    if (part) tally[part] = (tally[part] ?? 0) + (p.timeDeltas[i + 1] ?? 0) / n;
  }
  return tally;
}

/** The live heap of a snapshot (taken after a full GC): total, strings, compiled code, ES modules, in MB. */
function heap(file) {
  const d = JSON.parse(readFileSync(file, 'utf8'));
  const f = d.snapshot.meta.node_fields;
  const types = d.snapshot.meta.node_types[0];
  const [it, iname, isz, w] = [f.indexOf('type'), f.indexOf('name'), f.indexOf('self_size'), f.length];
  const r = { total: 0, strings: 0, code: 0, modules: 0 };
  for (let i = 0; i < d.nodes.length; i += w) {
    const type = types[d.nodes[i + it]];
    const size = d.nodes[i + isz];
    r.total += size;
    if (type.includes('string')) r.strings += size;
    else if (type === 'code') r.code += size;
    else if (type === 'hidden' && d.strings[d.nodes[i + iname]] === 'system / SourceTextModule') r.modules++;
  }
  for (const k of ['total', 'strings', 'code']) r[k] = +(r[k] / 1e6).toFixed(1);
  return r;
}

async function side(name) {
  const dir = join(OUT, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const mock = spawn(process.execPath, [new URL('./mock-upstream.mjs', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const mockPort = (await lineOf(mock, /MOCK_PORT=(\d+)/))[1];
  const port = await freePort();
  const gw = spawn(process.execPath, [`${dirs[name]}/bench/run.mjs`], {
    cwd: dirs[name],
    env: {
      ...process.env,
      BENCH_SERVE: `http://127.0.0.1:${mockPort}`,
      BENCH_PORT: String(port),
      BENCH_TOKENS: String(TOKENS),
      BENCH_NODE_FLAGS: `--cpu-prof --cpu-prof-dir=${dir} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${dir}`,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const pid = Number((await lineOf(gw, /GATEWAY_PID=(\d+)/))[1]);
  let k = 0;
  const load = (seconds) =>
    autocannon({
      url: `http://127.0.0.1:${port}/v1/chat/completions`,
      method: 'POST',
      connections: 32,
      duration: seconds,
      overallRate: RATE,
      body,
      setupClient: (c) =>
        c.setHeaders({ 'content-type': 'application/json', authorization: `Bearer ${keys[k++ % keys.length]}` }),
    });
  await load(Math.max(3, DURATION / 2));
  // the profile's timestamps are CLOCK_MONOTONIC µs, as process.hrtime here
  const t0 = Number(process.hrtime.bigint() / 1000n);
  const r = await load(DURATION);
  const t1 = Number(process.hrtime.bigint() / 1000n);
  const rss = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  process.kill(pid, 'SIGUSR2');
  let snapshot;
  for (let i = 0; i < 300 && !snapshot; i++) {
    await sleep(200);
    snapshot = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
  }
  // the snapshot's file appears when it starts; wait until its size stops changing
  for (let size = -1, now = 0; size !== now;) {
    size = now;
    await sleep(500);
    now = statSync(join(dir, snapshot)).size;
  }
  process.kill(pid, 'SIGTERM');
  while (alive(pid)) await sleep(100);
  gw.kill();
  mock.kill();
  const profiles = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  // the main thread's profile is the first one written (the log worker's comes second)
  const main = profiles.sort()[0];
  return {
    n: r.requests.total,
    errors: r.non2xx + r.errors,
    peakRssMB: +rss.toFixed(1),
    parts: parts(join(dir, main), t0, t1, r.requests.total),
    heap: heap(join(dir, snapshot)),
  };
}

const result = { base: await side('base'), head: await side('head') };
const fmt = (v) => (v ?? 0).toFixed(1);
console.log(`\n${MODE} at ${RATE} req/s, ${DURATION} s: base ${result.base.n} answers, head ${result.head.n}`);
console.log('| main thread, µs per request | base | head | Δ |\n|---|---|---|---|');
let tb = 0;
let th = 0;
for (const [key, label] of Object.entries(PART_NAMES)) {
  const b = result.base.parts[key] ?? 0;
  const h = result.head.parts[key] ?? 0;
  tb += b;
  th += h;
  console.log(`| ${label} | ${fmt(b)} | ${fmt(h)} | ${fmt(h - b)} |`);
}
console.log(`| **total** | ${fmt(tb)} | ${fmt(th)} | ${fmt(th - tb)} |`);
console.log('\n| live heap after a full GC | base | head |\n|---|---|---|');
for (const k of ['total', 'strings', 'code'])
  console.log(`| ${k} MB | ${result.base.heap[k]} | ${result.head.heap[k]} |`);
console.log(`| ES modules | ${result.base.heap.modules} | ${result.head.heap.modules} |`);
console.log(`| peak RSS MB (profiled) | ${result.base.peakRssMB} | ${result.head.peakRssMB} |`);
console.log(`profiles and snapshots: ${OUT}`);
if (result.base.errors || result.head.errors)
  throw new Error(`non-2xx answers: ${result.base.errors} / ${result.head.errors}`);
process.exit(0);
