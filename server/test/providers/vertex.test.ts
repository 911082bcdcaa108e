// Vertex AI plumbing: service-account keys, regions, URLs, bodies, and OAuth tokens obtained from a mock that checks
// the JWT grant as Google does, then used against its model endpoints.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toVertexClaudeBody } from '../../src/relay/providers/vertex/body.js';
import { parseServiceAccount, ServiceAccountError } from '../../src/relay/providers/vertex/credentials.js';
import { vertexTarget } from '../../src/relay/providers/vertex/endpoint.js';
import { vertexRegion, VertexRegionError } from '../../src/relay/providers/vertex/region.js';
import { GOOGLE_TOKEN_URL, tokenUrlFor, VertexTokenError } from '../../src/relay/providers/vertex/token.js';
import { VertexTokenCache } from '../helpers/vertex-tokens.js';
import { SseParser } from '../../src/relay/stream/sse-parser.js';
import { makeServiceAccount, MockVertex } from '../helpers/mock-vertex.js';

describe('parseServiceAccount', () => {
  const good = JSON.parse(makeServiceAccount('https://oauth2.googleapis.com/token'));

  it('reads a key file', () => {
    const sa = parseServiceAccount(JSON.stringify(good));
    expect(sa).toMatchObject({
      type: 'service_account',
      project_id: good.project_id,
      private_key_id: good.private_key_id,
      client_email: good.client_email,
      token_uri: 'https://oauth2.googleapis.com/token',
    });
    expect(sa.private_key).toContain('-----BEGIN PRIVATE KEY-----');
  });

  it.each([
    ['not json', /must be a service-account JSON/],
    ['[1]', /JSON object/],
    [JSON.stringify({ ...good, type: 'authorized_user' }), /expected "service_account"/],
    [JSON.stringify({ ...good, project_id: '' }), /missing project_id/],
    [JSON.stringify({ type: 'service_account' }), /missing project_id, private_key_id, private_key, client_email/],
    [JSON.stringify({ ...good, private_key: 'abc' }), /not a PEM private key/],
  ])('refuses %#', (key, message) => {
    expect(() => parseServiceAccount(key)).toThrow(ServiceAccountError);
    expect(() => parseServiceAccount(key)).toThrow(message);
  });
});

describe('vertexRegion', () => {
  it('reads a plain region, a per-model JSON with default, or nothing', () => {
    expect(vertexRegion('', 'gemini-2.5-pro')).toBe('global');
    expect(vertexRegion(' us-central1 ', 'gemini-2.5-pro')).toBe('us-central1');
    const perModel = '{"default":"us-east5","gemini-2.5-pro":"global"}';
    expect(vertexRegion(perModel, 'gemini-2.5-pro')).toBe('global');
    expect(vertexRegion(perModel, 'claude-sonnet-4@20250514')).toBe('us-east5');
    expect(vertexRegion('{"gemini-2.5-pro":"europe-west4"}', 'other')).toBe('global');
  });

  it('looks a JSON region up by the client’s model name first, then the names after mapping', () => {
    const byModel = '{"default":"us-central1","claude-3-5-sonnet-20240620":"europe-west1","sonnet":"asia-east1"}';
    const names = ['claude-3-5-sonnet-20240620', 'claude-3-5-sonnet@20240620'];
    expect(vertexRegion(byModel, names)).toBe('europe-west1');
    expect(vertexRegion(byModel, ['sonnet', 'claude-3-5-sonnet-20240620'])).toBe('asia-east1');
    expect(vertexRegion(byModel, ['my-alias', 'claude-3-5-sonnet-20240620'])).toBe('europe-west1');
    expect(vertexRegion(byModel, ['my-alias', 'gemini-2.5-pro'])).toBe('us-central1');
  });

  it('refuses what is not a location', () => {
    expect(() => vertexRegion('{"default":', 'm')).toThrow(VertexRegionError);
    expect(() => vertexRegion('evil.com/x', 'm')).toThrow(/not a location/);
    expect(() => vertexRegion('{"default":5}', 'm')).toThrow(/must be a string/);
  });
});

describe('vertexTarget and toVertexClaudeBody', () => {
  it('builds Gemini URLs, global and regional', () => {
    const base = { project: 'my-proj', publisher: 'google' as const, model: 'gemini-2.5-pro' };
    expect(vertexTarget({ ...base, region: 'global', action: 'generateContent', stream: false })).toEqual({
      origin: 'https://aiplatform.googleapis.com',
      path: '/v1/projects/my-proj/locations/global/publishers/google/models/gemini-2.5-pro:generateContent',
    });
    expect(vertexTarget({ ...base, region: 'us-central1', action: 'generateContent', stream: true })).toEqual({
      origin: 'https://us-central1-aiplatform.googleapis.com',
      path: '/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    });
    expect(vertexTarget({ ...base, region: 'us-central1', action: 'countTokens', stream: false }).path).toMatch(
      /:countTokens$/,
    );
  });

  it('builds Claude URLs, and the base URL replaces the origin', () => {
    const base = {
      project: 'p',
      region: 'us-east5',
      publisher: 'anthropic' as const,
      model: 'claude-sonnet-4@20250514',
    };
    expect(vertexTarget({ ...base, action: 'rawPredict', stream: false })).toEqual({
      origin: 'https://us-east5-aiplatform.googleapis.com',
      path: '/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4%4020250514:rawPredict',
    });
    expect(vertexTarget({ ...base, action: 'rawPredict', stream: true, baseUrl: 'http://127.0.0.1:1234' })).toEqual({
      origin: 'http://127.0.0.1:1234',
      path: '/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4%4020250514:streamRawPredict',
    });
    expect(() => vertexTarget({ ...base, action: 'generateContent', stream: false })).toThrow(/no :generateContent/);
  });

  it('drops model, keeps stream, sets the Vertex API version', () => {
    expect(toVertexClaudeBody({ model: 'claude', stream: true, max_tokens: 5, messages: [] })).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      stream: true,
      max_tokens: 5,
      messages: [],
    });
  });
});

describe('tokenUrlFor', () => {
  const sa = parseServiceAccount(makeServiceAccount('https://evil.example.com/token'));
  it('ignores a token_uri off googleapis.com, honours a Google one and the override', () => {
    expect(tokenUrlFor(sa)).toBe(GOOGLE_TOKEN_URL);
    expect(tokenUrlFor({ ...sa, token_uri: 'http://oauth2.googleapis.com/token' })).toBe(GOOGLE_TOKEN_URL);
    expect(tokenUrlFor({ ...sa, token_uri: 'https://googleapis.com.evil.io/token' })).toBe(GOOGLE_TOKEN_URL);
    expect(tokenUrlFor({ ...sa, token_uri: 'https://sts.googleapis.com/v1/token' })).toBe(
      'https://sts.googleapis.com/v1/token',
    );
    expect(tokenUrlFor(sa, 'http://127.0.0.1:1/token')).toBe('http://127.0.0.1:1/token');
  });
});

describe('VertexTokenCache against the mock token endpoint', () => {
  let mock: MockVertex;
  let clock: number;
  const cacheFor = () => new VertexTokenCache({ tokenUrl: mock.tokenUrl, now: () => clock });

  beforeAll(async () => {
    mock = await MockVertex.start();
  });
  afterAll(() => mock.close());
  beforeEach(() => {
    clock = Date.now();
    mock.tokenLifetimeSec = 3599;
  });

  it('obtains a token the model endpoints accept, and caches it', async () => {
    const sa = parseServiceAccount(mock.newServiceAccount());
    const cache = cacheFor();
    const before = mock.issuedTokens;
    const token = await cache.get(sa);
    expect(await cache.get(sa)).toBe(token);
    expect(mock.issuedTokens - before).toBe(1);
    const grant = mock.grants[mock.grants.length - 1];
    expect(grant).toMatchObject({
      iss: sa.client_email,
      aud: mock.tokenUrl,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
    });

    const target = vertexTarget({
      project: sa.project_id,
      region: 'global',
      publisher: 'google',
      model: 'gemini-2.5-pro',
      action: 'generateContent',
      stream: false,
      baseUrl: mock.url,
    });
    const res = await fetch(target.origin + target.path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    });
    expect(res.status).toBe(200);
    const json: any = await res.json();
    expect(json.candidates[0]).toMatchObject({
      content: { role: 'model', parts: [{ text: 'Hello from Gemini on Vertex!' }] },
      finishReason: 'STOP',
    });
    expect(json.usageMetadata).toMatchObject({ promptTokenCount: 9, candidatesTokenCount: 5, totalTokenCount: 14 });
  });

  it('shares one grant among concurrent callers', async () => {
    const sa = parseServiceAccount(mock.newServiceAccount());
    const cache = cacheFor();
    const before = mock.issuedTokens;
    const tokens = await Promise.all(Array.from({ length: 8 }, () => cache.get(sa)));
    expect(new Set(tokens).size).toBe(1);
    expect(mock.issuedTokens - before).toBe(1);
  });

  it('keeps the tokens of at most maxAccounts service accounts, the newest still reused', async () => {
    const cache = new VertexTokenCache({ tokenUrl: mock.tokenUrl, now: () => clock, maxAccounts: 2 });
    const accounts = Array.from({ length: 4 }, () => parseServiceAccount(mock.newServiceAccount()));
    for (const sa of accounts) await cache.get(sa);
    expect(cache.size).toBe(2);
    const before = mock.issuedTokens;
    await cache.get(accounts[3]);
    expect(mock.issuedTokens).toBe(before); // kept
    await cache.get(accounts[0]);
    expect(mock.issuedTokens).toBe(before + 1); // forgotten: a new grant
    expect(cache.size).toBe(2);
  });

  it('refreshes a token within 5 minutes of its expiry, and after invalidate', async () => {
    const sa = parseServiceAccount(mock.newServiceAccount());
    const cache = cacheFor();
    mock.tokenLifetimeSec = 900;
    const first = await cache.get(sa);
    clock += 9 * 60_000; // 6 minutes left: still good
    expect(await cache.get(sa)).toBe(first);
    clock += 2 * 60_000; // 4 minutes left: replaced
    const second = await cache.get(sa);
    expect(second).not.toBe(first);
    cache.invalidate(sa);
    const third = await cache.get(sa);
    expect(third).not.toBe(second);
  });

  it('keeps tokens per service account', async () => {
    const a = parseServiceAccount(mock.newServiceAccount());
    const b = parseServiceAccount(mock.newServiceAccount());
    const cache = cacheFor();
    expect(await cache.get(a)).not.toBe(await cache.get(b));
  });

  it('does not cache a refused grant (a key the token endpoint does not know, a forged signature)', async () => {
    const cache = cacheFor();
    const stranger = parseServiceAccount(makeServiceAccount(mock.tokenUrl));
    await expect(cache.get(stranger)).rejects.toThrow(VertexTokenError);
    await expect(cache.get(stranger)).rejects.toThrow(/invalid_grant/);
    // right account name, wrong private key
    const known = parseServiceAccount(mock.newServiceAccount());
    const other = parseServiceAccount(makeServiceAccount(mock.tokenUrl));
    const forged = { ...known, private_key: other.private_key };
    await expect(cache.get(forged)).rejects.toThrow(/Invalid JWT Signature/);
    // once trusted, the same account gets through: the failure was not cached
    mock.trust(JSON.stringify(stranger));
    expect(await cache.get(stranger)).toMatch(/^ya29\./);
  });

  it("model endpoints refuse a missing, unknown or expired token with Google's 401", async () => {
    const sa = parseServiceAccount(mock.newServiceAccount());
    const cache = cacheFor();
    mock.tokenLifetimeSec = 1;
    const token = await cache.get(sa);
    const target = vertexTarget({
      project: sa.project_id,
      region: 'us-east5',
      publisher: 'anthropic',
      model: 'claude-sonnet-4@20250514',
      action: 'rawPredict',
      stream: false,
      baseUrl: mock.url,
    });
    const body = JSON.stringify(
      toVertexClaudeBody({ model: 'x', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }),
    );
    const call = (auth?: string) =>
      fetch(target.origin + target.path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
        body,
      });
    for (const auth of [undefined, 'Bearer ya29.unknown']) {
      const res = await call(auth);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({
        error: {
          code: 401,
          status: 'UNAUTHENTICATED',
          message: expect.stringMatching(/^Request had invalid authentication credentials/),
        },
      });
    }
    expect((await call(`Bearer ${token}`)).status).toBe(200);
    // the token's second has passed on the mock's clock
    mock.now = () => Date.now() + 2000;
    try {
      expect((await call(`Bearer ${token}`)).status).toBe(401);
    } finally {
      mock.now = Date.now;
    }
  });
});

describe('the Vertex mock model endpoints', () => {
  let mock: MockVertex;
  let token: string;
  let project: string;
  beforeAll(async () => {
    mock = await MockVertex.start();
    const sa = parseServiceAccount(mock.newServiceAccount());
    project = sa.project_id;
    token = await new VertexTokenCache({ tokenUrl: mock.tokenUrl }).get(sa);
  });
  afterAll(() => mock.close());

  const post = (publisher: 'google' | 'anthropic', model: string, action: any, stream: boolean, body: unknown) => {
    const t = vertexTarget({ project, region: 'us-east5', publisher, model, action, stream, baseUrl: mock.url });
    return fetch(t.origin + t.path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  };
  const sse = async (res: Response) => {
    const parser = new SseParser();
    return [...parser.push(Buffer.from(await res.arrayBuffer())), ...parser.end()];
  };

  it('streams Claude as SSE after checking the body', async () => {
    const claudeBody = toVertexClaudeBody({
      model: 'm',
      stream: true,
      max_tokens: 8,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const res = await post('anthropic', 'claude-sonnet-4@20250514', 'rawPredict', true, claudeBody);
    expect(res.status).toBe(200);
    const events = await sse(res);
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['message_start', 'ping', 'content_block_delta', 'message_delta', 'message_stop']),
    );
    expect(JSON.parse(events[0].data).message.id).toMatch(/^msg_vrtx_/);
    const last = mock.requests[mock.requests.length - 1];
    expect(last.path).toMatch(/:streamRawPredict$/);

    const withModel = await post('anthropic', 'claude-sonnet-4@20250514', 'rawPredict', false, {
      ...claudeBody,
      model: 'claude',
    });
    expect(withModel.status).toBe(400);
    expect(await withModel.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const bedrockVersion = await post('anthropic', 'claude-sonnet-4@20250514', 'rawPredict', false, {
      ...claudeBody,
      anthropic_version: 'bedrock-2023-05-31',
    });
    expect(bedrockVersion.status).toBe(400);
  });

  it('streams Gemini as SSE with usage on the last chunk, and answers a function call', async () => {
    const res = await post('google', 'gemini-2.5-flash', 'generateContent', true, {
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const chunks = (await sse(res)).map((e) => JSON.parse(e.data));
    expect(chunks.map((c) => c.candidates[0].content.parts[0].text).join('')).toBe('Hello from Gemini on Vertex!');
    expect(chunks[chunks.length - 1]).toMatchObject({
      candidates: [{ finishReason: 'STOP' }],
      usageMetadata: { totalTokenCount: 14 },
    });

    mock.answer = () => ({
      kind: 'gemini',
      answer: { kind: 'function_call', name: 'get_weather', args: { city: 'Paris' } },
    });
    const call = await post('google', 'gemini-2.5-flash', 'generateContent', false, {
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    });
    expect(((await call.json()) as any).candidates[0].content.parts[0]).toEqual({
      functionCall: { name: 'get_weather', args: { city: 'Paris' } },
    });

    mock.answer = () => ({
      kind: 'error',
      status: 429,
      googleStatus: 'RESOURCE_EXHAUSTED',
      message: 'Resource exhausted. Please try again later.',
    });
    const limited = await post('google', 'gemini-2.5-flash', 'generateContent', false, {
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    });
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({
      error: { code: 429, message: 'Resource exhausted. Please try again later.', status: 'RESOURCE_EXHAUSTED' },
    });
  });
});
