// `node scripts/ascii-literals.mjs <dir>`, run by the server's build after tsc: in every .js file under <dir>, the
// characters beyond Latin-1 inside string and template literals and identifiers (the Chinese messages, and the
// property names of message tables) are written as \u escapes.
// Why: V8 keeps each module's source text for the life of the process, and one such character anywhere makes it keep
// the whole file as a two-byte string; escaped, the file is one byte per character (docs/perf/startup-loads.md,
// "Source text"). The values and names are unchanged. Tagged templates are left alone (a tag can read the raw text),
// and so are regular expressions: such a file simply stays two-byte. Columns of the source map
// after an escaped character on its line shift; lines do not.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const BEYOND_LATIN1 = /[^\x00-\xff]/;
const BEYOND_LATIN1_ALL = /[^\x00-\xff]/g;
const unicodeEscape = (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** The text of a JavaScript module with its literals' non-Latin-1 characters escaped. */
export function asciiLiterals(text) {
  if (!BEYOND_LATIN1.test(text)) return text;
  const file = ts.createSourceFile('module.js', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const spans = [];
  const visit = (node) => {
    if (ts.isTaggedTemplateExpression(node)) return;
    if (
      ts.isIdentifier(node) ||
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      const start = node.getStart(file);
      if (BEYOND_LATIN1.test(text.slice(start, node.end))) spans.push([start, node.end]);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  let out = '';
  let at = 0;
  for (const [start, end] of spans) {
    out += text.slice(at, start) + text.slice(start, end).replace(BEYOND_LATIN1_ALL, unicodeEscape);
    at = end;
  }
  return out + text.slice(at);
}

function* jsFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* jsFiles(path);
    else if (entry.name.endsWith('.js')) yield path;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const path of jsFiles(process.argv[2] ?? 'dist')) {
    const text = readFileSync(path, 'utf8');
    const escaped = asciiLiterals(text);
    if (escaped !== text) writeFileSync(path, escaped);
  }
}
