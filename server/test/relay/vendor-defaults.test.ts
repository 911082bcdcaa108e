// What new-api adds for particular OpenAI-protocol vendors, and only for them. OpenRouter channels (type 20) get its
// attribution headers (HTTP-Referer, X-OpenRouter-Title) and `usage: {include: true}` in chat bodies, so that the
// answer's usage carries the cost; an OpenAI channel gets the client's bytes. An Azure channel without its own
// api-version gets new-api's default one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, relayPost, setOptions } from './fixtures.js';

describe('vendor defaults on the OpenAI protocol', () => {
  let s: TestServer;
  let up: MockUpstream;
  let key: string;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    await setOptions(s, { ModelRatio: { 'or/chat': 1, 'or/embed': 1, 'oa-chat': 1, 'az-chat': 1 } });
    await addChannel(s, { type: 20, baseUrl: up.url, key: 'sk-or-key', models: ['or/chat', 'or/embed'] });
    await addChannel(s, { type: 1, baseUrl: up.url, key: 'sk-oa-key', models: ['oa-chat'] });
    await addChannel(s, { type: 3, baseUrl: up.url, key: 'az-key', models: ['az-chat'] });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 10_000_000 });
    key = (await addToken(s, u.id, { unlimited: true })).key;
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  const attribution = (h: Record<string, unknown>) => ({
    referer: h['http-referer'],
    title: h['x-openrouter-title'],
    legacyTitle: h['x-title'],
  });

  it("sends OpenRouter new-api's attribution headers and asks for the cost in the usage", async () => {
    up.reset();
    const res = await relayPost(s, '/v1/chat/completions', key, {
      model: 'or/chat',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    expect(up.requests).toHaveLength(1);
    const sent = up.requests[0];
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-or-key');
    expect(attribution(sent.headers)).toEqual({
      referer: 'https://www.newapi.ai',
      title: 'New API',
      legacyTitle: undefined,
    });
    expect(sent.body).toEqual({
      model: 'or/chat',
      messages: [{ role: 'user', content: 'hi' }],
      usage: { include: true },
    });
  });

  it('asks for it in streams too (without stream_options), and leaves a usage field the client set', async () => {
    up.reset();
    const stream = await relayPost(s, '/v1/chat/completions', key, {
      model: 'or/chat',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(stream.status).toBe(200);
    await stream.text();
    expect(up.requests[0].body.usage).toEqual({ include: true });
    expect(up.requests[0].body.stream_options).toBeUndefined();

    const own = await relayPost(s, '/v1/chat/completions', key, {
      model: 'or/chat',
      usage: { include: false },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(own.status).toBe(200);
    expect(up.requests[1].body.usage).toEqual({ include: false });
    expect(attribution(up.requests[1].headers).title).toBe('New API');
  });

  it('asks for it when a Claude client reaches OpenRouter through the hub', async () => {
    up.reset();
    const res = await relayPost(s, '/v1/messages', key, {
      model: 'or/chat',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    const sent = up.requests[0];
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body.usage).toEqual({ include: true });
    expect(attribution(sent.headers)).toMatchObject({ referer: 'https://www.newapi.ai', title: 'New API' });
  });

  it('adds no usage field to embeddings, as new-api', async () => {
    up.reset();
    const res = await relayPost(s, '/v1/embeddings', key, { model: 'or/embed', input: 'hello' });
    expect(res.status).toBe(200);
    expect(up.requests[0].body).toEqual({ model: 'or/embed', input: 'hello' });
    expect(attribution(up.requests[0].headers).referer).toBe('https://www.newapi.ai');
  });

  it("gives an OpenAI channel none of it: the client's bytes, no attribution headers", async () => {
    up.reset();
    const body = { model: 'oa-chat', messages: [{ role: 'user', content: 'hi' }] };
    const res = await relayPost(s, '/v1/chat/completions', key, body);
    expect(res.status).toBe(200);
    const sent = up.requests[0];
    expect(sent.raw).toBe(JSON.stringify(body));
    expect(sent.headers.authorization).toBe('Bearer sk-oa-key');
    expect(attribution(sent.headers)).toEqual({ referer: undefined, title: undefined, legacyTitle: undefined });

    const hub = await relayPost(s, '/v1/messages', key, {
      model: 'oa-chat',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(hub.status).toBe(200);
    expect(up.requests[1].body.usage).toBeUndefined();
    expect(attribution(up.requests[1].headers)).toEqual({
      referer: undefined,
      title: undefined,
      legacyTitle: undefined,
    });
  });

  it("sends an Azure channel without its own api-version new-api's default one", async () => {
    up.reset();
    const res = await relayPost(s, '/v1/chat/completions', key, {
      model: 'az-chat',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    expect(up.requests[0].path).toBe('/openai/deployments/az-chat/chat/completions?api-version=2025-04-01-preview');
    expect(up.requests[0].headers['api-key']).toBe('az-key');
    expect(attribution(up.requests[0].headers)).toEqual({
      referer: undefined,
      title: undefined,
      legacyTitle: undefined,
    });
  });
});
