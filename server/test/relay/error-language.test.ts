// Relay error messages follow the client's Accept-Language (issue 34): new-api's Chinese by default, English when
// the client prefers English, in every client format; the site's RelayErrorLanguage for clients that name neither.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, client, setOptions } from './fixtures.js';
import { prefersEnglish, relayMessageInEnglish } from '../../src/lib/relay-english.js';

describe('relay error language', () => {
  let s: TestServer;
  let up: MockUpstream;
  let key: string;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    await setOptions(s, { ModelRatio: { 'm-a': 1, 'm-free': 1 } });
    await addChannel(s, { baseUrl: up.url, models: ['m-a'], groups: ['default'] });
    await channelsChanged(s);
    const u = await addUser(s);
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  const call = async (path: string, auth: string | null, language: string | null, model = 'm-a') => {
    const h: Record<string, string> = { 'content-type': 'application/json' };
    if (auth !== null) h.authorization = auth;
    if (auth !== null) h['x-api-key'] = auth.replace(/^Bearer /, '');
    if (language !== null) h['accept-language'] = language;
    const body = { model, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] };
    const res = await fetch(`${s.url}${path}`, { method: 'POST', headers: h, body: JSON.stringify(body) });
    const j = (await res.json()) as { error?: { message?: string } };
    return { status: res.status, message: String(j.error?.message ?? '').replace(/ \(request id: [^)]+\)$/, '') };
  };

  it('answers in Chinese without Accept-Language or when Chinese comes first', async () => {
    expect(await call('/v1/chat/completions', null, null)).toEqual({ status: 401, message: '未提供令牌' });
    expect((await call('/v1/chat/completions', null, 'zh-CN,zh;q=0.9,en;q=0.8')).message).toBe('未提供令牌');
  });

  it('answers in English when the client asks for en-US', async () => {
    expect(await call('/v1/chat/completions', null, 'en-US')).toEqual({ status: 401, message: 'No token provided' });
    expect((await call('/v1/chat/completions', 'Bearer sk-nope', 'en-US,en;q=0.9,zh;q=0.5')).message).toBe(
      'Invalid token',
    );
  });

  it('translates the values inside a templated message and keeps the status', async () => {
    const zh = await call('/v1/chat/completions', `Bearer sk-${key}`, null, 'm-free');
    expect(zh.message).toBe('当前分组 default 下对于模型 m-free 无可用渠道');
    const en = await call('/v1/chat/completions', `Bearer sk-${key}`, 'en-US', 'm-free');
    expect(en).toEqual({ status: zh.status, message: 'No available channel for model m-free in group default' });
  });

  it('answers in English in the Anthropic error shape too', async () => {
    const res = await fetch(`${s.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-language': 'en-US' },
      body: JSON.stringify({ model: 'm-a', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    });
    const j = (await res.json()) as { type?: string; error?: { message?: string } };
    expect(res.status).toBe(401);
    expect(j.error?.message).toMatch(/^No token provided/);
  });

  it('writes quota amounts with an ASCII dollar sign in English', () => {
    expect(
      relayMessageInEnglish('token quota is not enough, token remain quota: ＄0.000002, need quota: ＄0.000010'),
    ).toBe('token quota is not enough, token remain quota: $0.000002, need quota: $0.000010');
    expect(relayMessageInEnglish('upstream said: 额度')).toBe('upstream said: 额度');
  });

  it('reads the preferred language from the weights', () => {
    expect(prefersEnglish('en-US')).toBe(true);
    expect(prefersEnglish('en')).toBe(true);
    expect(prefersEnglish('zh-CN,en;q=0.8')).toBe(false);
    expect(prefersEnglish('zh;q=0.5,en-GB;q=0.9')).toBe(true);
    expect(prefersEnglish('*')).toBe(false);
    expect(prefersEnglish(undefined)).toBe(false);
    expect(prefersEnglish('english')).toBe(false);
  });

  it('lets the site choose English for clients that name neither language (issue 46, point 6)', async () => {
    await setOptions(s, { RelayErrorLanguage: 'en' });
    try {
      // the official SDK sends no Accept-Language
      const sdk = client(s, 'sk-nope');
      await expect(
        sdk.chat.completions.create({ model: 'm-a', messages: [{ role: 'user', content: 'x' }] }),
      ).rejects.toMatchObject({ status: 401, message: expect.stringMatching(/^401 Invalid token/) });
      expect(await call('/v1/chat/completions', null, null)).toEqual({ status: 401, message: 'No token provided' });
      expect((await call('/v1/chat/completions', null, 'fr-FR,fr;q=0.9')).message).toBe('No token provided');
      expect((await call('/v1/chat/completions', null, '*')).message).toBe('No token provided');
      // a client that asks for Chinese still gets it
      expect((await call('/v1/chat/completions', null, 'zh-CN')).message).toBe('未提供令牌');
    } finally {
      await setOptions(s, { RelayErrorLanguage: 'zh' });
    }
    expect((await call('/v1/chat/completions', null, null)).message).toBe('未提供令牌');
  });
});
