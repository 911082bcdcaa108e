// Lists the Chinese texts the server can put on the wire, read from server/src with the TypeScript parser (comments
// and identifiers are ignored, only string values count). A plain literal gives an exact message; a template literal
// or a `+` chain gives a pattern whose interpolated parts are numbered `{0}`, `{1}`, … in source order, the form the
// console's translation table (web/src/i18n/server-messages.ts) uses for its keys.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface ServerMessage {
  /** The text, with `{n}` for each interpolated value. */
  text: string;
  isPattern: boolean;
  /** `path:line` of each place it is written (relative to server/src). */
  places: string[];
}

const CJK = /[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]/;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '__fixtures__') out.push(...sourceFiles(full));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
      out.push(full);
    }
  }
  return out;
}

function isStringLike(node: ts.Node): node is ts.StringLiteral | ts.NoSubstitutionTemplateLiteral {
  return ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node);
}

/** Flattens `a + b + c` into its operands. */
function plusOperands(node: ts.Expression): ts.Expression[] {
  if (ts.isParenthesizedExpression(node)) return plusOperands(node.expression);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    return [...plusOperands(node.left), ...plusOperands(node.right)];
  }
  return [node];
}

/** Pattern text of a template / `+` chain; nested templates and literals are inlined, anything else is `{n}`. */
function patternOf(parts: ts.Expression[]): string {
  let n = 0;
  const render = (e: ts.Expression): string => {
    if (isStringLike(e)) return e.text;
    if (ts.isTemplateExpression(e)) {
      return e.head.text + e.templateSpans.map((s) => render(s.expression) + s.literal.text).join('');
    }
    if (ts.isParenthesizedExpression(e)) return render(e.expression);
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      return plusOperands(e).map(render).join('');
    }
    return `{${n++}}`;
  };
  return parts.map(render).join('');
}

export function extractServerMessages(srcDir: string): ServerMessage[] {
  const found = new Map<string, ServerMessage>();
  const add = (text: string, isPattern: boolean, file: ts.SourceFile, node: ts.Node): void => {
    if (!CJK.test(text)) return;
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
    const place = `${relative(srcDir, file.fileName)}:${line}`;
    const known = found.get(text);
    if (known) known.places.push(place);
    else found.set(text, { text, isPattern, places: [place] });
  };
  for (const path of sourceFiles(srcDir)) {
    const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
      if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
        const parts = plusOperands(node);
        if (parts.some((p) => isStringLike(p) || ts.isTemplateExpression(p))) {
          const text = patternOf(parts);
          add(text, /\{\d+\}/.test(text), file, node);
          return;
        }
      }
      if (ts.isTemplateExpression(node)) {
        add(patternOf([node]), true, file, node);
        return;
      }
      if (isStringLike(node)) {
        add(node.text, false, file, node);
        return;
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return [...found.values()].sort((a, b) => a.places[0].localeCompare(b.places[0]));
}
