// `npm start`: build the console and the server when their sources are newer than the build, then serve both
// on PORT (default 3000) with the embedded SQLite database under ./data/.
import { execSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function newest(dir) {
  let t = 0;
  if (!existsSync(dir)) return t;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

function stale(pkg, marker) {
  const out = join(root, pkg, marker);
  if (!existsSync(out)) return true;
  const srcTime = Math.max(newest(join(root, pkg, 'src')), statSync(join(root, pkg, 'package.json')).mtimeMs);
  return srcTime > statSync(out).mtimeMs;
}

if (stale('web', 'dist/index.html')) {
  console.log('building the console…');
  execSync('npm run build -w web', { cwd: root, stdio: 'inherit' });
}
if (stale('server', 'dist/index.js')) {
  console.log('building the server…');
  execSync('npm run build -w server', { cwd: root, stdio: 'inherit' });
}
// V8 flags of the server process, the same in bench/run.mjs. --max-semi-space-size=8 (MB, default 16 on 64-bit): the
// relay allocates fast and its objects die young; with 16 MB semi-spaces the young generation grew to ~48 MB and the
// heap to 90-125 MB under load (RSS 170-245 MB at 128 connections); with 8 MB the heap stayed at 53-62 MB and RSS at
// 149-165 MB, with the same throughput (measured with the perf harness, c=128 json + stream).
const SERVER_NODE_FLAGS = ['--max-semi-space-size=8'];
const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(root, 'server/dist/index.js')], { cwd: root, stdio: 'inherit', env: process.env });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
