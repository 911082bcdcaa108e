// undici is used through its public entry point only: lib/undici.ts imports the package's own module (on first use),
// and no source file reaches into the package's lib/ folder (its layout is not an API and may move in any release).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as undici from 'undici';
import { loadUndici } from '../../src/lib/undici.js';

const ROOTS = ['../../src', '../../../bench'].map((p) => fileURLToPath(new URL(p, import.meta.url)));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === 'node_modules'
        ? []
        : sources(join(dir, e.name))
      : /\.(ts|mjs|js)$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
}

describe('undici', () => {
  it('lib/undici.ts gives the classes undici exports, one module for every caller', async () => {
    const { Agent, buildConnector, ProxyAgent, Socks5ProxyAgent } = await loadUndici();
    expect(await loadUndici()).toBe(await loadUndici());
    expect(Agent).toBe(undici.Agent);
    expect(ProxyAgent).toBe(undici.ProxyAgent);
    expect(Socks5ProxyAgent).toBe(undici.Socks5ProxyAgent);
    expect(buildConnector).toBe(undici.buildConnector);
  });

  it('is imported from its public entry point, never from its lib/ files', () => {
    const offenders = ROOTS.flatMap(sources).filter((f) => /undici\/lib\//.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });
});
