#!/usr/bin/env node
// Rewrites the code comments' citations of an outside document ("facts §3.2", "Facts §3.4, §3.5", "(facts\n// §9.5)")
// into citations of docs/new-api-compat.md ("new-api-compat.md §3.2"), whose headings start with the section number
// and carry an anchor `s3-2`. Idempotent: a second run finds nothing to change.
//
//   node scripts/replace-facts-citations.mjs            rewrite server/src, server/test and web/src
//   node scripts/replace-facts-citations.mjs --check    change nothing; exit 1 if an old citation is left
//   node scripts/replace-facts-citations.mjs DIR...     other folders
//
// Before writing anything it checks that every cited section (old and new form) has a heading in the document and
// exits 1, listing them, if one has not. A rewritten comment line longer than 120 columns is wrapped into the comment
// it belongs to. It also lists (never changes) code comments that still hold benchmark figures.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DOC = join(ROOT, 'docs/new-api-compat.md');
const DOC_NAME = 'new-api-compat.md';
const MAX_COLUMNS = 120;
const EXTENSIONS = /\.(ts|tsx|mts|js|mjs)$/;

const args = process.argv.slice(2);
const checkOnly = args.includes('--check');
const dirs = args.filter((a) => !a.startsWith('--'));
const roots = (dirs.length ? dirs : ['server/src', 'server/test', 'web/src']).map((d) => join(ROOT, d));

// "§4.6", "§4.6 step 3"; a list goes on after ",", ";" or "and", also across a comment line break.
const NUM = String.raw`§(\d+(?:\.\d+)*)(?: step \d+)?`;
const GAP = String.raw`\s*(?:\n\s*(?:\/\/|\*|\{\/\*)?\s*)?`;
const LIST = String.raw`${NUM}(?:${GAP}(?:,|and)${GAP}${NUM.replace('(\\d', '(?:\\d')})*`;
const OLD = new RegExp(String.raw`\b([Ff]acts)(${GAP}|\s+)(?=${LIST})`, 'g');
const ANY = new RegExp(String.raw`\b(?:[Ff]acts|${DOC_NAME.replace('.', '\\.')})${GAP}(${LIST})`, 'g');
const SNAPSHOT = /\(the facts snapshot\)/g;
const SNAPSHOT_NEW = `(${DOC_NAME} §0)`;

const BENCH = [/µs\b/, /\bp50\b/, /\bp99\b/, /% of direct/i, /\bRPS\b/, /\breq\/s\b/i, /share of direct/i];

function files(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (EXTENSIONS.test(name)) out.push(p);
  }
  return out;
}

function docSections() {
  const have = new Set();
  for (const line of readFileSync(DOC, 'utf8').split('\n')) {
    const m = /^#{2,4} (\d+(?:\.\d+)*) /.exec(line);
    if (m) have.add(m[1]);
  }
  return have;
}

function citedSections(text) {
  const out = [];
  for (const m of text.matchAll(ANY)) {
    for (const n of m[1].matchAll(/§(\d+(?:\.\d+)*)/g)) out.push({ section: n[1], index: m.index });
  }
  return out;
}

function lineOf(text, index) {
  return text.slice(0, index).split('\n').length;
}

/** Splits a comment line into its prefix (indent, marker, space, list bullet) and its words. */
function commentParts(line) {
  const m = /^(\s*(?:\/\/|\*)\s)(\s*(?:- )?)(.*)$/.exec(line);
  if (!m || /^\s*\*\//.test(line)) return null;
  return { prefix: m[1] + m[2], continuation: m[1] + m[2].replace('- ', '  '), text: m[3] };
}

/** Wraps comment lines the rewrite made too long, moving their last words onto the comment's next line. */
function wrapLong(lines, touched) {
  const warnings = [];
  for (let i = 0; i < lines.length; i++) {
    if (!touched.has(i) || lines[i].length <= MAX_COLUMNS) continue;
    const single = /^(\s*)\/\*\* (.*) \*\/$/.exec(lines[i]);
    if (single) {
      const [, indent, text] = single;
      lines.splice(i, 1, `${indent}/**`, `${indent} * ${text}`, `${indent} */`);
      shiftTouched(touched, i, 2);
      touched.add(i + 1);
      continue;
    }
    const parts = commentParts(lines[i]);
    if (!parts || parts.text.endsWith('*/')) {
      warnings.push(i);
      continue;
    }
    // Move words to the next line of the same comment until this one fits.
    const words = lines[i].slice(parts.prefix.length).split(' ');
    const moved = [];
    while (words.length > 1 && (parts.prefix + words.join(' ')).length > MAX_COLUMNS) moved.unshift(words.pop());
    lines[i] = parts.prefix + words.join(' ');
    const next = lines[i + 1];
    const nextParts = next === undefined ? null : commentParts(next);
    if (nextParts && next.startsWith(parts.continuation) && nextParts.prefix === parts.continuation && nextParts.text) {
      lines[i + 1] = parts.continuation + moved.join(' ') + ' ' + next.slice(parts.continuation.length);
    } else {
      lines.splice(i + 1, 0, parts.continuation + moved.join(' '));
      shiftTouched(touched, i, 1);
    }
    touched.add(i + 1);
  }
  return warnings;
}

function shiftTouched(touched, after, by) {
  const moved = [...touched].map((t) => (t > after ? t + by : t));
  touched.clear();
  for (const t of moved) touched.add(t);
}

function benchFigures(file, text) {
  const hits = [];
  text.split('\n').forEach((line, i) => {
    const comment = /^\s*(?:\/\/|\*|\/\*|\{\/\*)/.test(line) ? line : (/\s\/\/\s.*$/.exec(line)?.[0] ?? '');
    if (comment && BENCH.some((re) => re.test(comment))) hits.push(`${file}:${i + 1}: ${line.trim()}`);
  });
  return hits;
}

const have = docSections();
const missing = [];
const plans = [];
const bench = [];
let citations = 0;

for (const root of roots) {
  for (const path of files(root)) {
    const file = relative(ROOT, path);
    const text = readFileSync(path, 'utf8');
    for (const c of citedSections(text)) {
      citations++;
      if (!have.has(c.section)) missing.push(`${file}:${lineOf(text, c.index)}: §${c.section}`);
    }
    bench.push(...benchFigures(file, text));
    if (!OLD.test(text) && !SNAPSHOT.test(text)) continue;
    OLD.lastIndex = 0;
    SNAPSHOT.lastIndex = 0;
    // Mark the lines the rewrite touches (by their index before the rewrite; the rewrite keeps line breaks).
    const touched = new Set();
    for (const m of text.matchAll(OLD)) touched.add(lineOf(text, m.index) - 1);
    for (const m of text.matchAll(SNAPSHOT)) touched.add(lineOf(text, m.index) - 1);
    const rewritten = text.replace(OLD, (_all, word, gap) => DOC_NAME + gap).replace(SNAPSHOT, SNAPSHOT_NEW);
    plans.push({ path, file, rewritten, touched });
  }
}

if (missing.length) {
  console.error(`Cited sections without a heading in docs/${DOC_NAME} (nothing was changed):`);
  for (const m of missing) console.error('  ' + m);
  process.exit(1);
}

let changedFiles = 0;
const unwrapped = [];
for (const { path, file, rewritten, touched } of plans) {
  const lines = rewritten.split('\n');
  for (const i of wrapLong(lines, touched)) unwrapped.push(`${file}:${i + 1}`);
  if (!checkOnly) writeFileSync(path, lines.join('\n'));
  changedFiles++;
}

console.log(
  `${citations} section citations checked against docs/${DOC_NAME}, all found. ` +
    (checkOnly ? `${changedFiles} file(s) still cite the old document.` : `${changedFiles} file(s) rewritten.`),
);
for (const u of unwrapped) console.log(`  longer than ${MAX_COLUMNS} columns, not wrapped: ${u}`);
if (bench.length) {
  console.log(`Code comments with benchmark figures (not changed; move them to docs/perf/): ${bench.length}`);
  for (const b of bench) console.log('  ' + b);
}
if (checkOnly && changedFiles) process.exit(1);
