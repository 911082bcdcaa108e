#!/usr/bin/env node
// Fails (exit 1, listing file:line) when a file still holds git merge-conflict markers, so `npm run lint` catches a
// merge committed half resolved.
//
//   node scripts/check-conflict-markers.mjs          the tracked files (`git ls-files`)
//   node scripts/check-conflict-markers.mjs FILE...  these files
//
// A line starting with `<<<<<<<` or `>>>>>>>` followed by a space or the end of the line is a marker anywhere. A line
// that is `=======` alone (or diff3's `|||||||` base marker) is one only between an opening and a closing marker:
// elsewhere it is a Markdown heading underline or a test's text.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const OPEN = /^<{7}(?: |$)/;
const CLOSE = /^>{7}(?: |$)/;
const MIDDLE = /^(?:={7}|\|{7}(?: .*)?)$/;

/** The markers in a text: `[{ line, text }]`, 1-based lines. */
export function findConflictMarkers(text) {
  const found = [];
  let open = false;
  text.split(/\r?\n/).forEach((line, i) => {
    const at = { line: i + 1, text: line };
    if (OPEN.test(line)) {
      found.push(at);
      open = true;
    } else if (CLOSE.test(line)) {
      found.push(at);
      open = false;
    } else if (open && MIDDLE.test(line)) {
      found.push(at);
    }
  });
  return found;
}

function trackedFiles() {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out.split('\0').filter(Boolean);
}

/** A file's text, or null for one that is gone, a folder (a submodule) or binary. */
function readText(path) {
  let buf;
  try {
    buf = readFileSync(path);
  } catch {
    return null;
  }
  return buf.includes(0) ? null : buf.toString('utf8');
}

function main() {
  const args = process.argv.slice(2);
  const files = args.length ? args : trackedFiles();
  let count = 0;
  for (const file of files) {
    const text = readText(args.length ? file : join(ROOT, file));
    if (text === null) continue;
    for (const m of findConflictMarkers(text)) {
      console.error(`${file}:${m.line}: merge-conflict marker: ${m.text.slice(0, 60)}`);
      count++;
    }
  }
  if (count) {
    console.error(`${count} merge-conflict marker(s) found: resolve the merge before committing.`);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
