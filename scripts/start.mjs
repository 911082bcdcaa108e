// `npm start`: build the console and the server when their sources are newer than the build, then serve both
// on PORT (default 3000) with the embedded SQLite database under ./data/.
import { execSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_ENV, SERVER_NODE_FLAGS } from './server-flags.mjs';

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
const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(root, 'server/dist/index.js')], {
  cwd: root,
  stdio: 'inherit',
  env: { ...SERVER_ENV, ...process.env },
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
// The script runs under `npm start` with `exec`, so npm's SIGTERM reaches it directly. Should npm itself be killed
// without passing the signal on (SIGKILL), this process is handed to init: stop the server then rather than leave
// it holding the port with nobody to stop it.
const launcher = process.ppid;
setInterval(() => {
  if (process.ppid !== launcher) child.kill('SIGTERM');
}, 1000).unref();
