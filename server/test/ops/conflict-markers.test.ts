// scripts/check-conflict-markers.mjs, run by `npm run lint`: merge-conflict markers fail the lint, Markdown heading
// underlines and look-alike lines do not.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../../scripts/check-conflict-markers.mjs', import.meta.url));
const PACKAGE_JSON = fileURLToPath(new URL('../../../package.json', import.meta.url));
const { findConflictMarkers } = (await import(pathToFileURL(SCRIPT).href)) as {
  findConflictMarkers: (text: string) => Array<{ line: number; text: string }>;
};

// built, so that this file holds no marker line itself
const OPEN = '<'.repeat(7);
const MIDDLE = '='.repeat(7);
const CLOSE = '>'.repeat(7);
const lines = (...l: string[]) => l.join('\n');
const markerLines = (text: string) => findConflictMarkers(text).map((m) => m.line);

describe('conflict-marker check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'markers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds the three markers of a conflict, with or without a label', () => {
    const text = lines('a', `${OPEN} HEAD`, 'ours', MIDDLE, 'theirs', `${CLOSE} branch`, 'b');
    expect(findConflictMarkers(text)).toEqual([
      { line: 2, text: `${OPEN} HEAD` },
      { line: 4, text: MIDDLE },
      { line: 6, text: `${CLOSE} branch` },
    ]);
    expect(markerLines(lines(OPEN, 'x', MIDDLE, 'y', CLOSE))).toEqual([1, 3, 5]);
    // CRLF files and diff3's base marker
    expect(
      markerLines(lines(`${OPEN} HEAD\r`, 'x\r', `${'|'.repeat(7)} base\r`, 'o\r', `${MIDDLE}\r`, `${CLOSE} b\r`)),
    ).toEqual([1, 3, 5, 6]);
  });

  it('a lone opening or closing marker counts', () => {
    expect(markerLines(lines('text', `${OPEN} HEAD`, 'rest'))).toEqual([2]);
    expect(markerLines(lines('text', CLOSE))).toEqual([2]);
  });

  it('leaves Markdown heading underlines and look-alike lines alone', () => {
    const markdown = lines('Title', MIDDLE, '', 'Section', '-------', 'text', MIDDLE, `${MIDDLE}=`);
    expect(findConflictMarkers(markdown)).toEqual([]);
    // not at the start of the line, or followed by something other than a space
    const lookAlike = lines(`  ${OPEN} HEAD`, `'${OPEN} HEAD'`, `${OPEN}<`, `${OPEN}x`, `${CLOSE}>`, `> ${CLOSE}`);
    expect(findConflictMarkers(lookAlike)).toEqual([]);
    // a heading underline after a closed conflict is a heading again
    expect(markerLines(lines(OPEN, MIDDLE, CLOSE, 'Title', MIDDLE))).toEqual([1, 2, 3]);
  });

  it('the command exits 1 naming file and line, 0 for clean files', () => {
    const bad = join(dir, 'bad.md');
    const good = join(dir, 'good.md');
    writeFileSync(bad, lines('# doc', `${OPEN} HEAD`, 'a', MIDDLE, 'b', `${CLOSE} other`, ''));
    writeFileSync(good, lines('Title', MIDDLE, 'text', ''));
    expect(execFileSync(process.execPath, [SCRIPT, good], { encoding: 'utf8', stdio: 'pipe' })).toBe('');
    let failure: { status: number; stderr: string } | undefined;
    try {
      execFileSync(process.execPath, [SCRIPT, good, bad], { encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      failure = err as { status: number; stderr: string };
    }
    expect(failure?.status).toBe(1);
    expect(failure?.stderr).toContain(`${bad}:2: merge-conflict marker: ${OPEN} HEAD`);
    expect(failure?.stderr).toContain(`${bad}:4:`);
    expect(failure?.stderr).toContain(`${bad}:6:`);
    expect(failure?.stderr).toContain('3 merge-conflict marker(s) found');
  });

  it('npm run lint runs it over the tracked files', async () => {
    const pkg = (await import(pathToFileURL(PACKAGE_JSON).href, { with: { type: 'json' } })) as {
      default: { scripts: Record<string, string> };
    };
    expect(pkg.default.scripts.lint).toContain('node scripts/check-conflict-markers.mjs');
  });
});
