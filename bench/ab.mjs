// `npm run bench:ab -- <base-ref>`: this working tree (head) against a base commit, side by side in one run
// (docs/perf/bench-ab.md). The base is checked out once per commit in a cached worktree under the system's temp folder
// and built there; head is built here. Then bench/ab-cpu.mjs serves both gateways on one mock upstream and alternates
// load between them and a direct call to the mock, once per cell (AB_CELLS, default "json stream"; also claude-json,
// the Anthropic Messages client on an Anthropic channel, and claude-x-json, that client on the OpenAI channels; AB_CASES,
// default "none"; "budget" gives every token a budget), and this prints one table: CPU time per relayed request of
// each side (the figure to read), the head/base ratio of the medians and the spread of the pair ratios, each side's
// RPS as a share of the same round's direct RPS, and each gateway's peak RSS.
// Env: ROUNDS (8), DURATION (5 s), WARMUP (4 s), CONNS (32), RATE (requests per second; empty: as fast as they go),
// BENCH_SQL_DSN (a PostgreSQL server's DSN: each gateway gets a fresh database of its own there instead of SQLite).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const ref = process.argv[2];
if (!ref) {
  console.error('usage: npm run bench:ab -- <base-ref>   (a commit, branch or tag to measure this tree against)');
  process.exit(2);
}
const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
const sha = git('rev-parse', '--verify', `${ref}^{commit}`);

function build(dir) {
  console.log(`building ${dir}`);
  execFileSync('npm', ['run', 'build', '-w', 'server'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
}

// the base: one detached worktree per commit, kept between runs (its build too); it shares this tree's node_modules
const cache = join(tmpdir(), 'gateway-bench-ab');
const base = join(cache, sha.slice(0, 12));
if (!existsSync(join(base, 'server', 'dist', 'index.js'))) {
  mkdirSync(cache, { recursive: true });
  if (!existsSync(base)) git('worktree', 'add', '--detach', base, sha);
  if (!existsSync(join(base, 'node_modules'))) symlinkSync(join(root, 'node_modules'), join(base, 'node_modules'));
  build(base);
}
build(root);

// AB_PROFILE=1: profiles and heap snapshots of both sides per cell (bench/ab-profile.mjs) instead of the CPU table
if (process.env.AB_PROFILE) {
  for (const mode of (process.env.AB_CELLS ?? 'json stream').split(/\s+/).filter(Boolean))
    execFileSync(process.execPath, [join(root, 'bench', 'ab-profile.mjs')], {
      cwd: root,
      env: { ...process.env, AB_BASE: base, AB_HEAD: root, MODE: mode },
      stdio: 'inherit',
    });
  process.exit(0);
}

const run = (env) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bench', 'ab-cpu.mjs')], {
      cwd: root,
      env: { ...process.env, AB_BASE: base, AB_HEAD: root, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      process.stdout.write(d);
    });
    child.on('exit', (code) => {
      const lines = out.split('\n');
      const line = lines.find((l) => l.startsWith('SUMMARY '));
      // a cell one build cannot serve (no such endpoint): a row saying so, and the other cells still run
      const unsupported = lines.find((l) => l.startsWith('UNSUPPORTED '));
      if (code === 3 && unsupported) resolve({ unsupported: unsupported.split(' ').slice(1) });
      else if (code !== 0 || !line) reject(new Error(`bench/ab-cpu.mjs exited ${code}`));
      else resolve(JSON.parse(line.slice(line.indexOf('{'))));
    });
  });

const words = (v, d) => (v ?? d).split(/\s+/).filter(Boolean);
const rows = [];
let database = '';
for (const kase of words(process.env.AB_CASES, 'none'))
  for (const mode of words(process.env.AB_CELLS, 'json stream')) {
    const s = await run({
      CASE: kase,
      MODE: mode,
      ROUNDS: process.env.ROUNDS ?? '8',
      DURATION: process.env.DURATION ?? '5',
    });
    if (s.unsupported) {
      const [side, ...what] = s.unsupported;
      rows.push(`| ${mode} | ${kase} | not measured: ${side} has no ${what.join(' ')} |${' |'.repeat(14)}`);
      continue;
    }
    database = s.database;
    const pairs = [...s.pairRatios].sort((a, b) => a - b);
    const share = (x) => `${(100 * x).toFixed(1)} %`;
    rows.push(
      `| ${mode} | ${kase} | ${s.base.cpuUsMedian.toFixed(1)} | ${s.head.cpuUsMedian.toFixed(1)} | ` +
        `**${s.ratio.toFixed(3)}** | ${s.base.mainUsMedian.toFixed(1)} | ${s.head.mainUsMedian.toFixed(1)} | ` +
        `${share(s.base.directShareMedian)} | ${share(s.head.directShareMedian)} | ` +
        `${s.direct.rpsMedian.toFixed(0)} | ${s.pairMedian.toFixed(3)} (${pairs[0]}–${pairs[pairs.length - 1]}) | ` +
        `${s.base.peakRssMB.toFixed(1)} | ${s.head.peakRssMB.toFixed(1)} | ${(s.head.peakRssMB - s.base.peakRssMB).toFixed(1)} | ` +
        `${s.base.runPeakRssMedianMB.toFixed(1)} | ${s.head.runPeakRssMedianMB.toFixed(1)} | ` +
        `${(s.head.runPeakRssMedianMB - s.base.runPeakRssMedianMB).toFixed(1)} |`,
    );
  }
// the database both gateways ran on (ab-cpu.mjs reads it from their environment); a DSN's kind when no cell ran
database ||= process.env.BENCH_SQL_DSN ? process.env.BENCH_SQL_DSN.split(':')[0] : 'SQLite';
console.log(
  `\nbase ${sha.slice(0, 12)} (${ref}) against head (this tree), ${process.env.RATE ?? 'max'} req/s, ${database}`,
);
console.log(
  '| cell | limits | CPU µs/req base | head | head/base | main thread µs base | head | share of direct base | head | direct RPS | ' +
    'pair ratios: median (min–max) | peak RSS MB base | head | Δ | run peaks MB, median: base | head | Δ |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
