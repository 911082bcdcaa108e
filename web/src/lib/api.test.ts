import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const toast = vi.hoisted(() => ({ error: vi.fn(), info: vi.fn(), success: vi.fn(), warning: vi.fn() }));
// api.ts toasts through lib/feedback.ts (context-aware antd instances); observe the calls there.
vi.mock('./feedback.js', () => ({ message: toast }));

import { api, apiFetch, navigation } from './api.js';
import i18n from '../i18n/index.js';

type Call = { url: string; init: RequestInit };
let calls: Call[];
let nextResponse: () => Response;

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  calls = [];
  nextResponse = () => new Response(JSON.stringify({ success: true, message: '', data: { ok: 1 } }), { status: 200 });
  vi.stubGlobal('fetch', (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return Promise.resolve(nextResponse());
  });
  Object.values(toast).forEach((f) => f.mockClear());
});

afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.clear();
});

const header = (c: Call, name: string) => new Headers(c.init.headers).get(name);

describe('api client', () => {
  it('sends New-Api-User -1 and no-store when nobody is logged in', async () => {
    const res = await api.get<{ ok: number }>('/api/status');
    expect(res).toMatchObject({ success: true, data: { ok: 1 } });
    expect(header(calls[0]!, 'New-Api-User')).toBe('-1');
    expect(header(calls[0]!, 'Cache-Control')).toBe('no-store');
    expect(calls[0]!.init.credentials).toBe('same-origin');
  });

  it('reads the user id from localStorage on every call', async () => {
    localStorage.setItem('user', JSON.stringify({ id: 42, username: 'a' }));
    await api.post('/api/user/login', { username: 'a' });
    expect(header(calls[0]!, 'New-Api-User')).toBe('42');
    expect(header(calls[0]!, 'Content-Type')).toBe('application/json');
    expect(calls[0]!.init.body).toBe('{"username":"a"}');
    localStorage.setItem('user', JSON.stringify({ id: 7 }));
    await apiFetch('/pg/chat/completions', { method: 'POST', headers: { Accept: 'text/event-stream' } });
    expect(header(calls[1]!, 'New-Api-User')).toBe('7');
    expect(header(calls[1]!, 'Accept')).toBe('text/event-stream');
  });

  it('encodes query params and skips empty ones', async () => {
    await api.get('/api/user/search', { keyword: 'a b', group: '', p: 1 });
    expect(calls[0]!.url).toBe('/api/user/search?keyword=a+b&p=1');
  });

  it('returns success:false envelopes to the caller without toasting', async () => {
    nextResponse = () => new Response(JSON.stringify({ success: false, message: '用户名或密码错误' }), { status: 200 });
    const res = await api.post('/api/user/login', {});
    expect(res.success).toBe(false);
    expect(res.message).toBe('用户名或密码错误');
    expect(toast.error).not.toHaveBeenCalled();
  });

  it('clears the stored user and redirects to /login?expired=true on 401', async () => {
    localStorage.setItem('user', JSON.stringify({ id: 3 }));
    const redirect = vi.spyOn(navigation, 'redirect').mockImplementation(() => {});
    nextResponse = () =>
      new Response(JSON.stringify({ success: false, message: '无权进行此操作，未登录' }), { status: 401 });
    await api.get('/api/user/self');
    expect(localStorage.getItem('user')).toBeNull();
    expect(redirect).toHaveBeenCalledWith('/login?expired=true');
  });

  it('shows the spec toasts for 429, 500, 405 and other errors', async () => {
    nextResponse = () => new Response('', { status: 429 });
    await expect(api.get('/api/x')).rejects.toThrow();
    expect(toast.error).toHaveBeenLastCalledWith('错误：请求次数过多，请稍后再试！');
    nextResponse = () => new Response('boom', { status: 500 });
    await expect(api.get('/api/x')).rejects.toThrow();
    expect(toast.error).toHaveBeenLastCalledWith('错误：服务器内部错误，请联系管理员！');
    nextResponse = () => new Response('', { status: 405 });
    await expect(api.get('/api/x')).rejects.toThrow();
    expect(toast.info).toHaveBeenLastCalledWith('本站仅作演示之用，无服务端！');
    nextResponse = () =>
      new Response(JSON.stringify({ success: false, message: 'already initialized' }), { status: 400 });
    const res = await api.post('/api/setup', {});
    expect(res.success).toBe(false);
    expect(toast.error).toHaveBeenLastCalledWith('错误：already initialized');
  });

  it('asks for the console language (relay errors of the playground) and gives server messages in it', async () => {
    await api.get('/api/status');
    expect(header(calls[0]!, 'Accept-Language')).toBe('zh-CN');
    await i18n.changeLanguage('en');
    nextResponse = () =>
      new Response(JSON.stringify({ success: false, message: '系统已经初始化完成' }), { status: 400 });
    const res = await api.post('/api/setup', {});
    expect(header(calls[1]!, 'Accept-Language')).toBe('en');
    expect(toast.error).toHaveBeenLastCalledWith('Error: The system is already initialized');
    expect(res.message).toBe('The system is already initialized');
    nextResponse = () => new Response(JSON.stringify({ success: false, message: '无效的兑换码' }), { status: 200 });
    expect((await api.post('/api/user/topup', { key: 'x' })).message).toBe('Invalid redemption code');
    await i18n.changeLanguage('zh');
    expect((await api.post('/api/user/topup', { key: 'x' })).message).toBe('无效的兑换码');
  });
});
