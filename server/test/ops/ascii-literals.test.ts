// scripts/ascii-literals.mjs, run by the server's build after tsc: the Chinese messages in string and template
// literals and identifiers are written as \u escapes, so that V8 can keep each module's source text one byte per character
// (docs/perf/startup-loads.md, "Source text"); every value stays what it was.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../../scripts/ascii-literals.mjs', import.meta.url));
const SERVER = fileURLToPath(new URL('../../', import.meta.url));
const { asciiLiterals } = (await import(pathToFileURL(SCRIPT).href)) as { asciiLiterals: (text: string) => string };

const SOURCE = [
  "export const message = '余额不足，请充值 — 剩余 ×1';",
  'export const template = `令牌 ${1 + 1} 已过期：${"用户"}`;',
  "export const keyed = { '模型': \"倍率\", 无效的参数: 'Invalid parameter' };",
  'export const raw = String.raw`原样\\n`;',
  "export const matches = /额度/.test('额度不足');",
  "export const emoji = '🚀 ok';",
].join('\n');

const evaluate = async (text: string) =>
  ({ ...(await import(`data:text/javascript,${encodeURIComponent(text)}`)) }) as Record<string, unknown>;
const beyondLatin1 = (text: string) => [...text].filter((ch) => ch.charCodeAt(0) > 0xff);

describe('ascii literals', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ascii-literals-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('escapes the literals and keeps every value, Latin-1 kept as it is', async () => {
    const out = asciiLiterals(SOURCE);
    expect(await evaluate(out)).toEqual(await evaluate(SOURCE));
    expect(out).toContain("'\\u4f59\\u989d\\u4e0d\\u8db3\\uff0c\\u8bf7\\u5145\\u503c \\u2014 \\u5269\\u4f59 ×1'");
    expect(out).toContain('\\ud83d\\ude80 ok');
    expect(out).toContain("\\u65e0\\u6548\\u7684\\u53c2\\u6570: 'Invalid parameter'");
  });

  it('leaves a tagged template and a regular expression as they are', () => {
    const out = asciiLiterals(SOURCE);
    expect(out).toContain('String.raw`原样\\n`');
    expect(out).toContain('/额度/');
    expect(beyondLatin1(out).join('')).toBe('原样额度');
  });

  it('rewrites the .js files of a folder, and only those that change', () => {
    const escaped = join(dir, 'a.js');
    const ascii = join(dir, 'b.js');
    writeFileSync(escaped, "export const a = '渠道';\n");
    writeFileSync(ascii, "export const b = 'plain';\n");
    writeFileSync(join(dir, 'c.js.map'), '{"names":["渠道"]}');
    execFileSync(process.execPath, [SCRIPT, dir]);
    expect(readFileSync(escaped, 'utf8')).toBe("export const a = '\\u6e20\\u9053';\n");
    expect(readFileSync(ascii, 'utf8')).toBe("export const b = 'plain';\n");
    expect(readFileSync(join(dir, 'c.js.map'), 'utf8')).toBe('{"names":["渠道"]}');
  });

  it('is part of the server build, which also drops the comments', async () => {
    const pkg = JSON.parse(readFileSync(join(SERVER, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json && node ../scripts/ascii-literals.mjs dist');
    const config = ts.readConfigFile(join(SERVER, 'tsconfig.build.json'), ts.sys.readFile);
    expect((config.config as { compilerOptions: { removeComments?: boolean } }).compilerOptions.removeComments).toBe(
      true,
    );
  });
});
