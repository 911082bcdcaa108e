// lib/undici.ts loads undici's dispatchers from its lib folder instead of its whole index. The classes must be the
// ones the package exports (a moved file fails here rather than at start). That requests work in a process that never
// loads the index is shown by the e2e relay spec (the channel test runs Agent.request() in the built server).
import { describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as undici from 'undici';
import { Agent, ProxyAgent, Socks5ProxyAgent } from '../../src/lib/undici.js';

describe('undici dispatchers loaded without the package index', () => {
  it('are the classes undici exports', () => {
    expect(Agent).toBe(undici.Agent);
    expect(ProxyAgent).toBe(undici.ProxyAgent);
    expect(Socks5ProxyAgent).toBe(undici.Socks5ProxyAgent);
  });

  it('carry the request API', async () => {
    const server = http.createServer((req, res) => res.end(`${req.method} ${req.url}`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const agent = new Agent();
    try {
      const res = await agent.request({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, path: '/x?y=1', method: 'POST', body: 'z' });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('POST /x?y=1');
    } finally {
      await agent.close();
      server.close();
    }
  });
});
