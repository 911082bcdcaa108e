// Soak: does the gateway's memory stay flat under steady traffic? For SQLite and then PostgreSQL, starts the mock
// upstream (bench/mock-upstream.mjs) and the built gateway seeded by bench/run.mjs's BENCH_SERVE mode (1,000 tokens,
// 100 channels), sends a bounded rate of mixed traffic (JSON and streaming chat completions, alternating, on one of the
// seeded tokens) for SOAK_MINUTES, and samples the gateway's RSS every 10 s. RSS under steady load is a sawtooth (the heap
// grows to the next major GC and drops back, a cycle of several minutes here: docs/perf/soak.md), so one sample at the
// end against one after the warm-up says more about the GC's phase than about growth. The verdict compares envelopes:
// the highest RSS of the last window against the highest of the first window after the warm-up (each a third of what
// follows the warm-up). Fails (exit 1) when that ratio is above 1.1, or when a request fails.
//
// Needs the built server (`npm run build`). Env: SOAK_MINUTES (30), SOAK_RATE (requests per second, 40),
// SOAK_WARMUP_SEC (a fifth of the run, at most 300), SOAK_DBS ("sqlite postgres"), SOAK_PG_URL
// (postgres://root@127.0.0.1:5432/test: the run creates its own database there and drops it).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

const env = process.env;
const MINUTES = Number(env.SOAK_MINUTES ?? 30);
const RATE = Number(env.SOAK_RATE ?? 40);
const DURATION_MS = MINUTES * 60_000;
const WARMUP_MS = Number(env.SOAK_WARMUP_SEC ?? Math.min(300, (MINUTES * 60) / 5)) * 1000;
const DBS = (env.SOAK_DBS ?? 'sqlite postgres').split(/\s+/).filter(Boolean);
const PG_URL = env.SOAK_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';
const bench = fileURLToPath(new URL('.', import.meta.url));

function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Starts a bench script and resolves with the `NAME=value` lines it prints once it has printed all of `names`. */
function start(script, names, extraEnv) {
  const child = spawn(process.execPath, [bench + script], {
    env: { ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const found = {};
  const ready = new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += String(d);
      for (const n of names) {
        const m = new RegExp(`${n}=(\\S+)`).exec(out);
        if (m) found[n] = m[1];
      }
      if (names.every((n) => n in found)) resolve(found);
    });
    child.on('exit', (code) => reject(new Error(`${script} exited ${code}`)));
  });
  return { child, ready };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One chat completion; resolves true when the answer is complete (a JSON body, or a stream ending in [DONE]). */
function call(base, key, stream) {
  const body = JSON.stringify({
    model: 'gpt-4o-mini',
    stream,
    messages: [{ role: 'user', content: 'Soak request of a typical size. '.repeat(20) }],
  });
  const url = new URL(`${base}/chat/completions`);
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          if (res.statusCode === 200 && (stream ? text.includes('[DONE]') : text.includes('"choices"'))) resolve(null);
          else resolve(`HTTP ${res.statusCode} ${stream ? 'stream' : 'json'}: ${text.slice(0, 200)}`);
        });
        res.on('error', (e) => resolve(`response ${stream ? 'stream' : 'json'}: ${e.message}`));
      },
    );
    req.on('error', (e) => resolve(`request ${stream ? 'stream' : 'json'}: ${e.code ?? ''} ${e.message}`));
    req.end(body);
  });
}

async function soak(kind) {
  const mock = start('mock-upstream.mjs', ['MOCK_PORT'], {});
  const { MOCK_PORT } = await mock.ready;
  const gwEnv = {
    BENCH_SERVE: `http://127.0.0.1:${MOCK_PORT}`,
    BENCH_PORT: String(3400 + Math.floor(Math.random() * 500)),
  };
  if (kind === 'postgres') gwEnv.BENCH_SQL_DSN = PG_URL;
  const gw = start('run.mjs', ['GATEWAY_URL', 'GATEWAY_KEY', 'GATEWAY_PID'], gwEnv);
  try {
    const { GATEWAY_URL, GATEWAY_KEY, GATEWAY_PID } = await gw.ready;
    const pid = Number(GATEWAY_PID);
    const started = Date.now();
    let sent = 0;
    let failed = 0;
    const failures = [];
    let warm = NaN;
    const samples = []; // [ms since start, MB]
    let nextSample = 0;
    const pending = new Set();
    while (Date.now() - started < DURATION_MS) {
      const due = Math.floor(((Date.now() - started) / 1000) * RATE);
      while (sent < due) {
        const at = Date.now() - started;
        const p = call(GATEWAY_URL, GATEWAY_KEY, sent % 2 === 1).then((why) => {
          if (why) {
            failed++;
            if (failures.length < 20) failures.push(`${(at / 1000).toFixed(0)} s: ${why}`);
          }
          pending.delete(p);
        });
        pending.add(p);
        sent++;
      }
      if (Date.now() - started >= nextSample) {
        samples.push([Date.now() - started, rssMb(pid)]);
        nextSample += 10_000;
      }
      if (Number.isNaN(warm) && Date.now() - started >= WARMUP_MS) {
        warm = rssMb(pid);
        console.log(`${kind}: RSS after ${(WARMUP_MS / 1000).toFixed(0)} s warm-up: ${warm.toFixed(1)} MB`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await Promise.all(pending);
    const end = rssMb(pid);
    const after = samples.filter(([t]) => t >= WARMUP_MS);
    const third = Math.max(1, Math.floor(after.length / 3));
    const peak = (xs) => Math.max(...xs.map(([, mb]) => mb));
    const firstPeak = peak(after.slice(0, third));
    const lastPeak = peak(after.slice(-third));
    const ratio = lastPeak / firstPeak;
    console.log(
      `${kind}: ${sent} requests in ${MINUTES} min (${RATE}/s, half streamed), ${failed} failed; ` +
        `RSS warm-up ${warm.toFixed(1)} MB, end ${end.toFixed(1)} MB; highest RSS of the first and last thirds after ` +
        `the warm-up ${firstPeak.toFixed(1)} / ${lastPeak.toFixed(1)} MB (×${ratio.toFixed(3)})`,
    );
    const perMinute = samples.filter((_, i) => i % 6 === 0).map(([, mb]) => mb.toFixed(0));
    console.log(`${kind}: RSS each minute (MB): ${perMinute.join(' ')}`);
    for (const f of failures) console.log(`${kind}: failed at ${f}`);
    return { kind, sent, failed, warm, end, firstPeak, lastPeak, ok: failed === 0 && ratio <= 1.1 };
  } finally {
    gw.child.kill('SIGTERM');
    await new Promise((r) => gw.child.once('exit', r));
    mock.child.kill('SIGTERM');
  }
}

const results = [];
for (const kind of DBS) results.push(await soak(kind));
agent.destroy();
console.table(results);
if (!results.every((r) => r.ok)) {
  console.error('soak failed: a request failed or the RSS peaks grew more than 10 % after the warm-up');
  process.exit(1);
}
