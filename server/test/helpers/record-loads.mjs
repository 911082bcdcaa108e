// Preloaded (`--import`) into a gateway process by startup-loads.test.ts: records the files of node_modules the
// process loads, one path or file: URL a line, in the file RECORD_LOADS_FILE names. ES modules are recorded as they
// are resolved (a resolve hook, record-loads-hooks.mjs); CommonJS modules, which Node 20's hooks do not see, are the
// keys of require.cache, written when the process exits.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const out = process.env.RECORD_LOADS_FILE;
if (out) {
  register('./record-loads-hooks.mjs', import.meta.url, { data: { out } });
  const require = createRequire(import.meta.url);
  process.on('exit', () => appendFileSync(out, `${Object.keys(require.cache).join('\n')}\n`));
}
