// lib/undici.ts loads undici's dispatchers from its lib folder instead of its whole index. The classes must be the
// ones the package exports (a moved file fails here rather than at start), and they must carry the request API in a
// process that never loads the index. This test file imports the index itself (which mixes that API in), so the second
// check runs lib/undici.ts in a worker thread: its own isolate, with its own module cache.
import { describe, expect, it } from 'vitest';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import ts from 'typescript';
import * as undici from 'undici';
import { Agent, buildConnector, ProxyAgent, Socks5ProxyAgent } from '../../src/lib/undici.js';

const SOURCE = fileURLToPath(new URL('../../src/lib/undici.ts', import.meta.url));

/** lib/undici.ts as a plain ES module (resolving packages from its own folder), plus `check`, run in a fresh worker. */
async function inFreshWorker(check: string): Promise<unknown> {
  const js = ts.transpileModule(readFileSync(SOURCE, 'utf8'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  const dir = mkdtempSync(join(tmpdir(), 'gwt-undici-'));
  const file = join(dir, 'check.mjs');
  writeFileSync(file, `${js.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(SOURCE).href))}\n${check}`);
  try {
    return await new Promise((resolve, reject) => {
      const w = new Worker(file);
      w.once('message', resolve);
      w.once('error', reject);
      w.once('exit', (code) => reject(new Error(`worker exited ${code} without an answer`)));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('undici dispatchers loaded without the package index', () => {
  it('are the classes undici exports', () => {
    expect(Agent).toBe(undici.Agent);
    expect(ProxyAgent).toBe(undici.ProxyAgent);
    expect(Socks5ProxyAgent).toBe(undici.Socks5ProxyAgent);
    expect(buildConnector).toBe(undici.buildConnector);
  });

  it('carry the request API in a process that never loads the index', async () => {
    const server = http.createServer((req, res) => res.end(`${req.method} ${req.url}`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const answer = await inFreshWorker(`
        import { parentPort } from 'node:worker_threads';
        const agent = new Agent();
        const res = await agent.request({ origin: ${JSON.stringify(origin)}, path: '/x?y=1', method: 'POST', body: 'z' });
        const text = await res.body.text();
        await agent.close();
        const indexLoaded = Object.keys(load.cache).some((k) => /[\\\\/]undici[\\\\/]index\\.js$/.test(k));
        parentPort.postMessage({ status: res.statusCode, text, indexLoaded });
      `);
      expect(answer).toEqual({ status: 200, text: 'POST /x?y=1', indexLoaded: false });
    } finally {
      server.close();
    }
  });
});
