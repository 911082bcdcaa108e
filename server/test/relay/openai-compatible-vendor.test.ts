// An OpenAI-compatible vendor is one folder and one registry line (relay/providers/index.ts): its manifest re-uses the
// OpenAI endpoint set with its own headers. A test-only vendor, registered as the registry's line does, makes its
// channel type relayable and serves chat as any provider does: an OpenAI client's request and a Claude client's
// (through the hub), each at the vendor's base URL with its headers, answered and billed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  logsOf,
  relayPost,
  setOptions,
  userRow,
} from './fixtures.js';
import { adaptorFor, hasAdaptor, registerProvider } from '../../src/relay/providers/index.js';
import { openaiCompatible } from '../../src/relay/providers/openai/compatible.js';

/** A channel type no built-in provider serves. */
const ACME_TYPE = 9201;
const MODEL = 'acme-chat-1';

/** What the vendor's folder would hold: its manifest, nothing else. */
const acmeAdaptor = openaiCompatible({
  id: 'acme-test-vendor',
  types: [ACME_TYPE],
  headers: () => ({ 'x-acme-client': 'gateway' }),
});

describe('an OpenAI-compatible vendor registered with one line', () => {
  let s: TestServer;
  let upstream: MockUpstream;
  let key: string;
  let userId: number;

  beforeAll(async () => {
    expect(hasAdaptor(ACME_TYPE)).toBe(false);
    // the registry's line
    registerProvider(acmeAdaptor);
    upstream = await MockUpstream.start();
    s = await startTestServer();
    await setOptions(s, { ModelRatio: { [MODEL]: 1 } });
    // the vendor's base URL carries a path prefix, as many compatible vendors' do
    await addChannel(s, { type: ACME_TYPE, baseUrl: `${upstream.url}/acme`, key: 'sk-acme', models: [MODEL] });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 10_000_000 });
    userId = u.id;
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
  });

  it('makes its channel type relayable, served by its manifest', async () => {
    expect(hasAdaptor(ACME_TYPE)).toBe(true);
    expect(await adaptorFor(ACME_TYPE)).toBe(acmeAdaptor);
  });

  it('relays an OpenAI client’s chat to {base}/v1/chat/completions with its headers, answered and billed', async () => {
    const before = (await userRow(s, userId)).quota;
    const r = await client(s, key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(r.choices[0].message.content).toBeTruthy();
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/acme/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-acme');
    expect(sent.headers['x-acme-client']).toBe('gateway');
    expect(sent.body.model).toBe(MODEL);
    const row = (await logsOf(s, userId)).at(-1)!;
    expect(row.model_name).toBe(MODEL);
    expect(row.quota).toBeGreaterThan(0);
    expect(before - (await userRow(s, userId)).quota).toBe(row.quota);
  });

  it('serves a Claude client through the hub at the same chat path', async () => {
    const r = await relayPost(s, '/v1/messages', key, {
      model: MODEL,
      max_tokens: 32,
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { type: string; content: { type: string }[] };
    expect(body.type).toBe('message');
    expect(body.content[0].type).toBe('text');
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/acme/v1/chat/completions');
    expect(sent.headers['x-acme-client']).toBe('gateway');
  });
});
