// Who may name the client address in X-Forwarded-For. By default only loopback and private peers (a reverse proxy on
// the same host or network); a client connecting from anywhere else is taken at its socket's address, so it cannot
// walk past the login rate limit or a token's IP allow list by writing the header. TRUSTED_PROXIES=* restores
// new-api's trust in every hop. The tests connect from 127.0.0.1: a TRUSTED_PROXIES list that leaves it out makes the
// test client such a direct, untrusted client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, setOptions } from './fixtures.js';

const LOGIN_LIMIT_ENV = {
  CRITICAL_RATE_LIMIT: '3',
  CRITICAL_RATE_LIMIT_DURATION: '600',
  GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
};

async function startWith(trustedProxies: string) {
  const s = await startTestServer({ env: { ...LOGIN_LIMIT_ENV, TRUSTED_PROXIES: trustedProxies } });
  const up = await MockUpstream.start();
  await setOptions(s, { ModelRatio: { 'm-a': 1 } });
  await addChannel(s, { baseUrl: up.url, models: ['m-a'] });
  await channelsChanged(s);
  return { s, up };
}

/** login statuses, each request claiming another address (followed by `realHop`, as a proxy appends it) */
async function loginsWithForgedAddresses(s: TestServer, count: number, realHop = ''): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${s.url}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `203.0.113.${i + 1}${realHop}` },
      body: JSON.stringify({ username: 'nobody', password: 'password123' }),
    });
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}

/** relay statuses for a token that allows only 203.0.113.7, on the fast path and through Fastify */
async function allowListStatuses(s: TestServer, xff: string | undefined): Promise<number[]> {
  const u = await addUser(s);
  const t = await addToken(s, u.id, { allowIps: '203.0.113.7' });
  const out: number[] = [];
  for (const path of ['/v1/chat/completions', '/v1/chat/completions?via=fastify']) {
    const res = await fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer sk-${t.key}`,
        'content-type': 'application/json',
        ...(xff ? { 'x-forwarded-for': xff } : {}),
      },
      body: JSON.stringify({ model: 'm-a', messages: [{ role: 'user', content: 'x' }] }),
    });
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

describe('X-Forwarded-For by default (TRUSTED_PROXIES unset), behind a proxy on loopback', () => {
  let s: TestServer;
  let up: MockUpstream;
  beforeAll(async () => {
    ({ s, up } = await startWith(''));
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  // the client writes an address of its own; the proxy (the test client on 127.0.0.1) appends the client's real one
  it('counts logins against the real address the proxy saw', async () => {
    expect(await loginsWithForgedAddresses(s, 5, ', 198.51.100.9')).toEqual([200, 200, 200, 429, 429]);
  });

  it("checks a token's IP allow list against the real address", async () => {
    expect(await allowListStatuses(s, '203.0.113.7, 198.51.100.9')).toEqual([403, 403]);
    expect(await allowListStatuses(s, '203.0.113.7')).toEqual([200, 200]);
  });
});

describe('X-Forwarded-For from a peer that is not a trusted proxy', () => {
  let s: TestServer;
  let up: MockUpstream;
  beforeAll(async () => {
    ({ s, up } = await startWith('10.0.0.0/8'));
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  it('does not reset the login rate limit', async () => {
    expect(await loginsWithForgedAddresses(s, 5)).toEqual([200, 200, 200, 429, 429]);
  });

  it("does not get past a token's IP allow list", async () => {
    const forged = await allowListStatuses(s, '203.0.113.7');
    expect(forged).toEqual([403, 403]);
  });
});

describe('TRUSTED_PROXIES=* (new-api: every hop trusted)', () => {
  let s: TestServer;
  let up: MockUpstream;
  beforeAll(async () => {
    ({ s, up } = await startWith('*'));
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  it('takes the left-most entry, as new-api does', async () => {
    expect(await loginsWithForgedAddresses(s, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(await allowListStatuses(s, '203.0.113.7, 198.51.100.9')).toEqual([200, 200]);
  });
});
