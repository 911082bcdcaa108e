// The channel test sends what the relay sends (issue 41): for each provider reachable with a static key, the request
// the upstream receives from a channel test and from a relay chat request with the same model and body is the same in
// method, path and query, the headers that carry auth, content type and vendor facts, and the body bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream, type RecordedRequest } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, setOptions } from '../relay/fixtures.js';

const COMPARED_HEADERS = [
  'authorization',
  'api-key',
  'x-api-key',
  'x-goog-api-key',
  'content-type',
  'accept',
  'anthropic-version',
  'anthropic-beta',
];

interface Case {
  provider: string;
  type: number;
  model: string;
  maxTokens: number;
}

const CASES: Case[] = [
  { provider: 'openai', type: 1, model: 'gpt-4o-mini', maxTokens: 10 },
  { provider: 'azure', type: 3, model: 'gpt-4o', maxTokens: 10 },
  { provider: 'ollama', type: 4, model: 'llama3', maxTokens: 10 },
  { provider: 'anthropic', type: 14, model: 'claude-3-5-haiku-20241022', maxTokens: 10 },
  { provider: 'gemini', type: 24, model: 'gemini-2.0-flash', maxTokens: 300 },
];

function wireOf(r: RecordedRequest) {
  return {
    method: r.method,
    path: r.path,
    headers: Object.fromEntries(COMPARED_HEADERS.map((h) => [h, r.headers[h]])),
    body: r.raw,
  };
}

describe('the channel probe and the relay', () => {
  let s: TestServer;
  let upstream: MockUpstream;
  let key: string;
  let adminHeaders: Record<string, string>;
  const channelOf: Record<string, number> = {};

  beforeAll(async () => {
    upstream = await MockUpstream.start();
    s = await startTestServer();
    await setOptions(s, { ModelRatio: Object.fromEntries(CASES.map((c) => [c.model, 1])) });
    for (const c of CASES)
      channelOf[c.provider] = await addChannel(s, {
        type: c.type,
        baseUrl: upstream.url,
        key: `sk-${c.provider}`,
        models: [c.model],
      });
    await channelsChanged(s);
    const admin = await addUser(s, { role: 100, username: 'probe-admin', quota: 10_000_000 });
    await s.ctx.db.updateTable('users').set({ access_token: 'probe-admin-token' }).where('id', '=', admin.id).execute();
    adminHeaders = { authorization: 'probe-admin-token', 'new-api-user': String(admin.id) };
    key = (await addToken(s, admin.id, { unlimited: true })).key;
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
  });

  it.each(CASES)('$provider: a channel test sends the relay request byte for byte', async (c) => {
    const before = upstream.requests.length;
    await fetch(`${s.url}/api/channel/test/${channelOf[c.provider]}?model=${c.model}`, { headers: adminHeaders });
    const body = { model: c.model, messages: [{ role: 'user', content: 'hi' }], max_tokens: c.maxTokens };
    // the client asks for JSON, as the probe does (a native lane passes the client's Accept on)
    await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    const sent = upstream.requests.slice(before);
    expect(sent).toHaveLength(2);
    expect(wireOf(sent[0])).toEqual(wireOf(sent[1]));
  });
});
