// The Claude and Gemini endpoints answered without an upstream: token counting (free), model lists in each client's
// shape, and JSON 404s in the caller's format for unknown paths under the relay's prefixes.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, logsOf, userRow } from '../relay/fixtures.js';

await describeEachDb('Claude and Gemini local endpoints', (kind) => {
  let s: TestServer;
  let up: MockUpstream;
  let key: string;
  let userId: number;

  beforeAll(async () => {
    up = await MockUpstream.start();
    s = await startTestServer({ kind });
    await addChannel(s, { type: 1, baseUrl: up.url, models: ['claude-3-5-sonnet-20241022', 'gemini-2.0-flash'] });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 1_000_000 });
    userId = u.id;
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  it('counts Claude and Gemini prompts locally, without an upstream call or a charge', async () => {
    const claude = new Anthropic({ apiKey: `sk-${key}`, baseURL: s.url, maxRetries: 0 });
    const c = await claude.messages.countTokens({
      model: 'claude-3-5-sonnet-20241022',
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'How many tokens is this sentence?' }],
    });
    expect(c.input_tokens).toBeGreaterThan(5);
    const g = await new GoogleGenAI({ apiKey: `sk-${key}`, httpOptions: { baseUrl: s.url } }).models.countTokens({
      model: 'gemini-2.0-flash',
      contents: 'How many tokens is this sentence?',
    });
    expect(g.totalTokens).toBeGreaterThan(5);
    expect(up.requests).toHaveLength(0);
    await flushLogs(s);
    expect(await logsOf(s, userId)).toHaveLength(0);
    expect((await userRow(s, userId)).quota).toBe(1_000_000);
  });

  it('refuses counting for a wrong key in the client format', async () => {
    const res = await fetch(`${s.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk-nope', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('lists the caller’s models in Gemini’s and Anthropic’s shapes', async () => {
    const g = new GoogleGenAI({ apiKey: `sk-${key}`, httpOptions: { baseUrl: s.url } });
    const names: string[] = [];
    for await (const m of await g.models.list()) names.push(m.name ?? '');
    expect(names).toEqual(expect.arrayContaining(['models/gemini-2.0-flash', 'models/claude-3-5-sonnet-20241022']));
    const one = await g.models.get({ model: 'gemini-2.0-flash' });
    expect(one.name).toBe('models/gemini-2.0-flash');

    const claude = new Anthropic({ apiKey: `sk-${key}`, baseURL: s.url, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of claude.models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining(['claude-3-5-sonnet-20241022']));
  });

  it('answers unknown relay paths with a JSON 404 in the caller’s format, never the console page', async () => {
    const gemini = await fetch(`${s.url}/v1beta/models/gemini-2.0-flash:unknownAction`, {
      method: 'POST',
      headers: { 'x-goog-api-key': `sk-${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(gemini.status).toBe(404);
    expect(await gemini.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
    for (const path of [
      '/v1beta/files',
      '/mj/submit/unknown',
      '/suno/x',
      '/kling/v1/videos',
      '/jimeng/x',
      '/v1/nothing',
    ]) {
      const res = await fetch(`${s.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/application\/json/);
      const body: any = await res.json();
      expect(body.error, path).toBeTruthy();
    }
    const claude = await fetch(`${s.url}/v1/messages/batches`);
    expect(claude.status).toBe(404);
    expect(await claude.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});
