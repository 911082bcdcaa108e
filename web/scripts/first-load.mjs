// Prints the gzipped size of what the browser fetches on the first load: every JS/CSS asset that dist/index.html
// references (entry script + modulepreload links + stylesheets). Usage: node scripts/first-load.mjs [--max-kb 400]
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const refs = new Set([...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]));
let total = 0;
for (const ref of refs) {
  const gz = gzipSync(readFileSync(join(dist, ref))).length;
  total += gz;
  console.log(`${(gz / 1024).toFixed(2).padStart(8)} kB  ${ref}`);
}
console.log(`first load: ${refs.size} files, ${(total / 1024).toFixed(2)} kB gzipped`);
const i = process.argv.indexOf('--max-kb');
if (i > 0 && total / 1024 > Number(process.argv[i + 1])) {
  console.error(`first load exceeds ${process.argv[i + 1]} kB`);
  process.exit(1);
}
