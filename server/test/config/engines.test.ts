// `npm install` on the oldest Node the project supports prints no engine warnings: every package in the lock file
// accepts the Node version of the root package.json's `engines` (packages that want a newer Node are pinned to
// releases that do not, through the root `overrides`).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const readJson = (name: string) => JSON.parse(readFileSync(`${root}${name}`, 'utf8'));

describe('package engines', () => {
  it('every locked package accepts the oldest supported Node', () => {
    const oldest = semver.minVersion(readJson('package.json').engines.node as string)!.version;
    const lock = readJson('package-lock.json') as {
      packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean; dev?: boolean }>;
    };
    const refusing = Object.entries(lock.packages)
      .filter(([, p]) => p.engines && !Array.isArray(p.engines) && p.engines.node)
      .filter(([, p]) => !semver.satisfies(oldest, (p.engines as { node: string }).node, { includePrerelease: true }))
      .map(([name, p]) => `${name} wants node ${(p.engines as { node: string }).node}`);
    expect(oldest).toBe('20.19.0');
    expect(refusing).toEqual([]);
  });
});
