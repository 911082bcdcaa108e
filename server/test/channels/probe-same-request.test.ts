// The channel test sends what the relay sends (issue 41): for each provider, the request
// the upstream receives from a channel test and from a relay chat request with the same model and body is the same in
// method, path and query, the headers that carry auth, content type and vendor facts, and the body bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream, type RecordedRequest } from '../helpers/mock-upstream.js';
import { MockBedrock } from '../helpers/mock-bedrock.js';
import { MockVertex } from '../helpers/mock-vertex.js';
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

// Bedrock signs each request with the time (SigV4): the signature and date are left out, the signed parts (credential
// scope, signed headers, the body's hash) compared. Vertex's OAuth token is cached, so both requests carry the same one.
describe('the channel probe and the relay, on providers that authorise each request', () => {
  let s: TestServer;
  let bedrock: MockBedrock;
  let vertex: MockVertex;
  let key: string;
  let adminHeaders: Record<string, string>;
  const channelOf: Record<string, number> = {};
  const BEDROCK_MODEL = 'claude-3-haiku-20240307';
  const VERTEX_MODEL = 'gemini-2.5-pro';

  beforeAll(async () => {
    [bedrock, vertex] = await Promise.all([
      MockBedrock.start({ accessKeyId: 'AKIDPROBE', secretAccessKey: 'probe-secret', region: 'us-east-1' }),
      MockVertex.start(),
    ]);
    s = await startTestServer({ env: { VERTEX_TOKEN_URL: vertex.tokenUrl } });
    await setOptions(s, { ModelRatio: { [BEDROCK_MODEL]: 1, [VERTEX_MODEL]: 1 } });
    channelOf.bedrock = await addChannel(s, {
      type: 33,
      baseUrl: bedrock.url,
      key: 'AKIDPROBE|probe-secret|us-east-1',
      models: [BEDROCK_MODEL],
    });
    channelOf.vertex = await addChannel(s, {
      type: 41,
      baseUrl: vertex.url,
      key: vertex.newServiceAccount(),
      models: [VERTEX_MODEL],
    });
    await channelsChanged(s);
    const admin = await addUser(s, { role: 100, username: 'probe-admin-2', quota: 10_000_000 });
    await s.ctx.db.updateTable('users').set({ access_token: 'probe-admin-2' }).where('id', '=', admin.id).execute();
    adminHeaders = { authorization: 'probe-admin-2', 'new-api-user': String(admin.id) };
    key = (await addToken(s, admin.id, { unlimited: true })).key;
  });
  afterAll(async () => {
    await s?.close();
    await bedrock?.close();
    await vertex?.close();
  });

  async function both(provider: string, model: string, maxTokens: number): Promise<void> {
    await fetch(`${s.url}/api/channel/test/${channelOf[provider]}?model=${model}`, { headers: adminHeaders });
    await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: maxTokens }),
    });
  }

  it('bedrock: the same signed parts, path and body', async () => {
    const before = bedrock.requests.length;
    await both('bedrock', BEDROCK_MODEL, 10);
    const sent = bedrock.requests.slice(before);
    expect(sent).toHaveLength(2);
    const canonical = (r: (typeof sent)[number]) => ({
      method: r.method,
      path: r.path,
      contentType: r.headers['content-type'],
      bodyHash: r.headers['x-amz-content-sha256'],
      signedParts: String(r.headers.authorization).replace(/Signature=[0-9a-f]+/, ''),
      body: r.raw.toString('utf8'),
    });
    expect(canonical(sent[0])).toEqual(canonical(sent[1]));
  });

  it('vertex: the same token, path and body', async () => {
    const calls = () => vertex.requests.filter((r) => r.model);
    const before = calls().length;
    await both('vertex', VERTEX_MODEL, 300);
    const sent = calls().slice(before);
    expect(sent).toHaveLength(2);
    expect(wireOf(sent[0] as RecordedRequest)).toEqual(wireOf(sent[1] as RecordedRequest));
  });
});
