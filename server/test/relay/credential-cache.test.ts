// The relay's cache of exchanged credentials (relay/credential-cache.ts): one exchange per key however many requests
// wait, a token replaced before it lapses, dropped on the upstream's 401 and when no channel holds its key any more,
// a bounded number kept, a failed exchange never kept. First against a counting credential and a clock the test
// moves, then through the relay with Vertex AI channels against the mock token endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialCache } from '../../src/relay/credential-cache.js';
import { providerEntries } from '../../src/relay/providers/index.js';
import type { ExchangedCredential, ProviderSettings } from '../../src/relay/providers/types.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockVertex } from '../helpers/mock-vertex.js';
import { addChannel, addToken, addUser, channelsChanged, relayPost, setOptions } from './fixtures.js';
import { relayServices } from '../../src/relay/services.js';

const MINUTE = 60_000;
const settings = {} as ProviderSettings;

interface CountingCredential {
  exchanges: number;
  /** when set, exchanges wait for it */
  gate: Promise<void> | null;
  /** when set, the next exchange fails with it */
  failWith: Error | null;
  lifetimeMs: number;
  credential: ExchangedCredential;
}

/** A credential whose exchanges are counted, answered when the test says so, and named `<key>#<exchange number>`. */
function countingCredential(lifetimeMs = 60 * MINUTE): CountingCredential {
  const c: CountingCredential = {
    exchanges: 0,
    gate: null,
    failWith: null,
    lifetimeMs,
    credential: {
      kind: 'exchanged',
      id: 'counting',
      exchange: async (key) => {
        const n = ++c.exchanges;
        const fail = c.failWith;
        c.failWith = null;
        if (c.gate) await c.gate;
        if (fail) throw fail;
        return { token: `${key}#${n}`, lifetimeMs: c.lifetimeMs };
      },
    },
  };
  return c;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('CredentialCache', () => {
  it('makes one exchange for 50 concurrent first requests, and they all get its token', async () => {
    const c = countingCredential();
    const cache = new CredentialCache();
    const gate = deferred();
    c.gate = gate.promise;
    const all = Promise.all(Array.from({ length: 50 }, () => cache.get(c.credential, 'key-a', settings)));
    gate.resolve();
    const tokens = await all;
    expect(c.exchanges).toBe(1);
    expect(new Set(tokens)).toEqual(new Set(['key-a#1']));
    expect(await cache.get(c.credential, 'key-a', settings)).toBe('key-a#1');
    expect(c.exchanges).toBe(1);
  });

  it('replaces a token 5 minutes before it lapses; the requests near expiry wait for the new one', async () => {
    let now = 1_000_000;
    const c = countingCredential(60 * MINUTE);
    const cache = new CredentialCache({ now: () => now });
    expect(await cache.get(c.credential, 'k', settings)).toBe('k#1');
    now += 55 * MINUTE - 1; // 5 minutes and 1 ms left: still used
    expect(await cache.get(c.credential, 'k', settings)).toBe('k#1');
    now += 1; // within the margin: every request now gets the refreshed token, from one exchange
    const gate = deferred();
    c.gate = gate.promise;
    const near = Promise.all(Array.from({ length: 10 }, () => cache.get(c.credential, 'k', settings)));
    gate.resolve();
    expect(new Set(await near)).toEqual(new Set(['k#2']));
    expect(c.exchanges).toBe(2);
    // the new token's life counts from its own exchange
    now += 54 * MINUTE;
    expect(await cache.get(c.credential, 'k', settings)).toBe('k#2');
  });

  it('uses a short-lived token for half its life rather than exchanging on every request', async () => {
    let now = 0;
    const c = countingCredential(4 * MINUTE);
    const cache = new CredentialCache({ now: () => now });
    expect(await cache.get(c.credential, 'k', settings)).toBe('k#1');
    now += 2 * MINUTE - 1;
    expect(await cache.get(c.credential, 'k', settings)).toBe('k#1');
    now += 1;
    expect(await cache.get(c.credential, 'k', settings)).toBe('k#2');
  });

  it('keeps tokens per key and per provider', async () => {
    const a = countingCredential();
    const b = countingCredential();
    const other = { ...b.credential, id: 'other' };
    const cache = new CredentialCache();
    expect(await cache.get(a.credential, 'k1', settings)).toBe('k1#1');
    expect(await cache.get(a.credential, 'k2', settings)).toBe('k2#2');
    expect(await cache.get(other, 'k1', settings)).toBe('k1#1');
    expect(a.exchanges).toBe(2);
    expect(b.exchanges).toBe(1);
    expect(cache.size).toBe(3);
  });

  it('forgets a retired key: a channel that gets its old key back exchanges again, and an answer in flight is not kept', async () => {
    const c = countingCredential();
    const cache = new CredentialCache();
    expect(await cache.get(c.credential, 'old', settings)).toBe('old#1');
    expect(await cache.get(c.credential, 'new', settings)).toBe('new#2');
    cache.forget('old');
    expect(cache.size).toBe(1);
    expect(await cache.get(c.credential, 'new', settings)).toBe('new#2');
    expect(await cache.get(c.credential, 'old', settings)).toBe('old#3');

    // retired while its exchange was out: the waiting request gets it, the cache does not keep it
    const gate = deferred();
    c.gate = gate.promise;
    const inFlight = cache.get(c.credential, 'edited', settings);
    cache.forget('edited');
    gate.resolve();
    expect(await inFlight).toBe('edited#4');
    c.gate = null;
    expect(await cache.get(c.credential, 'edited', settings)).toBe('edited#5');
  });

  it('exchanges again after the upstream refuses the token (invalidate)', async () => {
    const c = countingCredential();
    const cache = new CredentialCache();
    expect(await cache.get(c.credential, 'k', settings)).toBe('k#1');
    cache.invalidate(c.credential, 'k');
    expect(await cache.get(c.credential, 'k', settings)).toBe('k#2');
    expect(await cache.get(c.credential, 'k', settings)).toBe('k#2');
  });

  it('keeps a token per key and base URL: a channel moved to another host gets one of that host', async () => {
    const c = countingCredential();
    const cache = new CredentialCache();
    const at = (baseUrl: string) => ({ type: 15, key: 'k', baseUrl, other: '', organization: '' });
    const first = at('https://aip.baidubce.com');
    const moved = at('https://qianfan.example.internal');
    expect(await cache.get(c.credential, 'k', settings, first)).toBe('k#1');
    expect(await cache.get(c.credential, 'k', settings, moved)).toBe('k#2');
    expect(await cache.get(c.credential, 'k', settings, first)).toBe('k#1');
    expect(cache.size).toBe(2);
    // a refusal at one host leaves the other's token
    cache.invalidate(c.credential, 'k', moved);
    expect(await cache.get(c.credential, 'k', settings, first)).toBe('k#1');
    expect(await cache.get(c.credential, 'k', settings, moved)).toBe('k#3');
    // a key no channel holds is forgotten at every host
    cache.forget('k');
    expect(cache.size).toBe(0);
    expect(await cache.get(c.credential, 'k', settings, first)).toBe('k#4');
  });

  it('keeps at most maxEntries tokens, the least recently exchanged forgotten first', async () => {
    const c = countingCredential();
    const cache = new CredentialCache({ maxEntries: 3 });
    for (const k of ['k1', 'k2', 'k3', 'k4', 'k5']) await cache.get(c.credential, k, settings);
    expect(cache.size).toBe(3);
    expect(c.exchanges).toBe(5);
    expect(await cache.get(c.credential, 'k5', settings)).toBe('k5#5'); // kept
    expect(await cache.get(c.credential, 'k3', settings)).toBe('k3#3'); // kept
    expect(await cache.get(c.credential, 'k1', settings)).toBe('k1#6'); // forgotten: exchanged again
    expect(cache.size).toBe(3);
  });

  it('shares a failed exchange with the requests waiting for it, and does not keep it', async () => {
    const c = countingCredential();
    const cache = new CredentialCache();
    const gate = deferred();
    c.gate = gate.promise;
    c.failWith = new Error('token endpoint said no');
    const waiting = Array.from({ length: 5 }, () => cache.get(c.credential, 'k', settings));
    gate.resolve();
    for (const w of waiting) await expect(w).rejects.toThrow('token endpoint said no');
    expect(c.exchanges).toBe(1);
    expect(cache.size).toBe(0);
    c.gate = null;
    expect(await cache.get(c.credential, 'k', settings)).toBe('k#2');
  });

  it('names its entries by hashes of the key and the base URL, never the key', async () => {
    const c = countingCredential();
    const cache = new CredentialCache();
    const secret = 'sk-very-secret-channel-key';
    const baseUrl = 'https://user:base-url-secret@vendor.example';
    await cache.get(c.credential, secret, settings, { type: 15, key: secret, baseUrl, other: '', organization: '' });
    const names = [...(cache as unknown as { tokens: Map<string, unknown> }).tokens.keys()];
    expect(names).toHaveLength(1);
    expect(names[0]).not.toContain(secret);
    expect(names[0]).not.toContain('base-url-secret');
  });

  it('every provider declares a credential its authorize can honour', async () => {
    const entries = await providerEntries();
    for (const [protocol, adaptor] of entries) {
      const kind = adaptor.credential?.kind ?? 'static';
      if (kind !== 'static') expect(adaptor.authorize, protocol).toBeTypeOf('function');
      // an exchanged token is dropped when the upstream refuses it
      if (kind === 'exchanged') expect(adaptor.unauthorized, protocol).toBeTypeOf('function');
    }
    const kinds = Object.fromEntries(entries.map(([p, a]) => [p, a.credential?.kind ?? 'static']));
    expect(kinds).toMatchObject({ vertex: 'exchanged', bedrock: 'signed', openai: 'static' });
  });
});

describe('Vertex AI tokens through the relay', () => {
  let s: TestServer;
  let vertex: MockVertex;
  let tokenKey: string;

  beforeAll(async () => {
    vertex = await MockVertex.start();
    s = await startTestServer({ env: { VERTEX_TOKEN_URL: vertex.tokenUrl } });
    await setOptions(s, { ModelRatio: { 'gemini-2.5-pro': 1 } });
    const u = await addUser(s, { quota: 100_000_000 });
    tokenKey = (await addToken(s, u.id, { unlimited: true })).key;
  });
  afterAll(async () => {
    await s?.close();
    await vertex?.close();
  });

  const chat = () =>
    relayPost(s, '/v1/chat/completions', tokenKey, {
      model: 'gemini-2.5-pro',
      messages: [{ role: 'user', content: 'Hi' }],
    });
  /** the bearer tokens of the model calls since `from` */
  const bearers = (from: number) =>
    vertex.requests
      .slice(from)
      .filter((r) => r.publisher)
      .map((r) => String(r.headers.authorization));

  it('50 concurrent first requests share one grant; a 401 makes the next request ask again', async () => {
    const key = vertex.newServiceAccount();
    const id = await addChannel(s, {
      type: 41,
      baseUrl: vertex.url,
      key,
      other: 'us-central1',
      models: ['gemini-2.5-pro'],
    });
    await channelsChanged(s);
    const grants = vertex.issuedTokens;
    const from = vertex.requests.length;
    const answers = await Promise.all(Array.from({ length: 50 }, () => chat()));
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(vertex.issuedTokens - grants).toBe(1);
    const used = bearers(from);
    expect(used).toHaveLength(50);
    expect(new Set(used).size).toBe(1);

    vertex.revokeAll();
    const refused = await chat();
    expect(refused.status).toBe(401);
    const after = vertex.requests.length;
    expect((await chat()).status).toBe(200);
    expect(vertex.issuedTokens - grants).toBe(2);
    expect(bearers(after)).toHaveLength(1);
    expect(bearers(after)[0]).not.toBe(used[0]);
    await s.ctx.db.deleteFrom('channels').where('id', '=', id).execute();
    await s.ctx.db.deleteFrom('abilities').where('channel_id', '=', id).execute();
    await channelsChanged(s);
  });

  it("an edited key gets its own token, and the old key's token is forgotten", async () => {
    const oldKey = vertex.newServiceAccount();
    const newKey = vertex.newServiceAccount();
    const id = await addChannel(s, {
      type: 41,
      baseUrl: vertex.url,
      key: oldKey,
      other: 'us-central1',
      models: ['gemini-2.5-pro'],
    });
    await channelsChanged(s);
    const grants = vertex.issuedTokens;
    let from = vertex.requests.length;
    expect((await chat()).status).toBe(200);
    const [oldToken] = bearers(from);
    expect(vertex.issuedTokens - grants).toBe(1);

    const setKey = async (key: string) => {
      await s.ctx.db.updateTable('channels').set({ key }).where('id', '=', id).execute();
      await channelsChanged(s);
    };
    await setKey(newKey);
    from = vertex.requests.length;
    expect((await chat()).status).toBe(200);
    expect(vertex.issuedTokens - grants).toBe(2);
    expect(bearers(from)).toHaveLength(1);
    expect(bearers(from)[0]).not.toBe(oldToken);
    expect(vertex.grants[vertex.grants.length - 1].iss).toBe(JSON.parse(newKey).client_email);

    // the old key came back: its token was dropped when no channel held it, so it is exchanged anew
    await setKey(oldKey);
    from = vertex.requests.length;
    expect((await chat()).status).toBe(200);
    expect(vertex.issuedTokens - grants).toBe(3);
    expect(bearers(from)[0]).not.toBe(oldToken);
  });

  it('the channel cache retires a key only when no channel holds it any more', async () => {
    const retired: string[] = [];
    relayServices(s.ctx).channels.onKeyRetired((key) => retired.push(key));
    const shared = 'shared-key-of-two-channels';
    const one = await addChannel(s, { type: 1, baseUrl: vertex.url, key: shared, models: ['m'] });
    const two = await addChannel(s, { type: 1, baseUrl: vertex.url, key: shared, models: ['m'] });
    await channelsChanged(s);
    await s.ctx.db.updateTable('channels').set({ key: 'edited-key' }).where('id', '=', one).execute();
    await channelsChanged(s);
    expect(retired).toEqual([]); // the other channel still holds it
    await s.ctx.db.deleteFrom('channels').where('id', '=', two).execute();
    await channelsChanged(s);
    expect(retired).toEqual([shared]);
    await s.ctx.db.deleteFrom('channels').where('id', '=', one).execute();
    await channelsChanged(s);
    expect(retired).toEqual([shared, 'edited-key']);
  });
});
