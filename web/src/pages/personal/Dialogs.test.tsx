// The personal page's dialogs and unbind (mutations): what each sends, what the user is told, and that the page shows
// the user as the server has it afterwards (the caller's own user is fetched again) — or, once deleted, the login page.
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import Personal from './index.js';

const ROUTES = [
  { path: '/personal', element: <Personal /> },
  { path: '/login', element: <div>login page</div> },
];

function selfUser(over: Record<string, unknown> = {}) {
  return {
    id: 3,
    username: 'ada',
    display_name: 'Ada',
    role: 1,
    status: 1,
    group: 'default',
    email: 'ada@example.com',
    quota: 0,
    used_quota: 0,
    request_count: 0,
    aff_count: 1,
    aff_quota: 1_000_000,
    aff_history_quota: 1_000_000,
    github_id: 'ada-gh',
    ...over,
  };
}

let self = selfUser();
let calls: Call[] = [];
const selfReads = () => calls.filter((c) => c.method === 'GET' && c.url === '/api/user/self').length;

/** `answers`: the reply per "METHOD path"; the server then holds `after` as the user. */
function serve(answers: Record<string, unknown>, after: Record<string, unknown> = {}) {
  calls = recordFetch(({ method, path }) => {
    const key = `${method} ${path}`;
    if (key in answers) {
      self = selfUser(after);
      return answers[key];
    }
    if (path === '/api/user/self') return self;
    if (path === '/api/user/models') return [];
    return '';
  });
}

function dialog() {
  return within(screen.getByRole('dialog'));
}

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('user', JSON.stringify({ id: 3, username: 'ada' }));
  self = selfUser();
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('personal page mutations', () => {
  it('changes the password with PUT, says so and reads the user again', async () => {
    serve({ 'PUT /api/user/self': null });
    renderWithApp(ROUTES, '/personal');
    fireEvent.click(await screen.findByRole('button', { name: '修改密码' }));
    fireEvent.change(dialog().getByPlaceholderText('输入原密码'), { target: { value: 'old-pass1' } });
    fireEvent.change(dialog().getByPlaceholderText('输入新密码，最短 8 位，最长 20 位'), {
      target: { value: 'new-pass12' },
    });
    fireEvent.change(dialog().getByPlaceholderText('再次输入新密码'), { target: { value: 'new-pass12' } });
    const before = selfReads();
    fireEvent.click(dialog().getByRole('button', { name: /确\s*定|OK/ }));
    expect(await screen.findByText('密码修改成功！')).toBeTruthy();
    expect(calls.find((c) => c.method === 'PUT')).toEqual({
      method: 'PUT',
      url: '/api/user/self',
      body: { password: 'new-pass12', original_password: 'old-pass1' },
    });
    await waitFor(() => expect(selfReads()).toBe(before + 1));
  });

  it('a refused password change shows the server message and keeps the dialog', async () => {
    serve({ 'PUT /api/user/self': new Response(JSON.stringify({ success: false, message: '原密码错误' })) });
    renderWithApp(ROUTES, '/personal');
    fireEvent.click(await screen.findByRole('button', { name: '修改密码' }));
    fireEvent.change(dialog().getByPlaceholderText('输入原密码'), { target: { value: 'wrong-pw' } });
    fireEvent.change(dialog().getByPlaceholderText('输入新密码，最短 8 位，最长 20 位'), {
      target: { value: 'new-pass12' },
    });
    fireEvent.change(dialog().getByPlaceholderText('再次输入新密码'), { target: { value: 'new-pass12' } });
    const before = selfReads();
    fireEvent.click(dialog().getByRole('button', { name: /确\s*定|OK/ }));
    expect(await screen.findByText('原密码错误')).toBeTruthy();
    expect(screen.getByRole('dialog')).toBeTruthy();
    expect(selfReads()).toBe(before);
  });

  it('transfers the referral reward and shows the balance the server then has', async () => {
    serve({ 'POST /api/user/aff_transfer': null }, { aff_quota: 0, quota: 1_000_000 });
    renderWithApp(ROUTES, '/personal');
    const transfer = await screen.findByRole('button', { name: '划转到余额' });
    fireEvent.click(transfer);
    fireEvent.click(dialog().getByRole('button', { name: /确\s*定|OK/ }));
    expect(await screen.findByText('划转成功')).toBeTruthy();
    expect(calls.find((c) => c.method === 'POST')).toEqual({
      method: 'POST',
      url: '/api/user/aff_transfer',
      body: { quota: 500_000 },
    });
    // nothing left to transfer once the user is read again
    await waitFor(() => expect((transfer as HTMLButtonElement).disabled).toBe(true));
  });

  it('deletes the account after the username is typed, then leaves for the login page', async () => {
    serve({ 'DELETE /api/user/self': null });
    renderWithApp(ROUTES, '/personal');
    fireEvent.click(await screen.findByRole('button', { name: '删除个人账户' }));
    fireEvent.change(dialog().getByPlaceholderText('输入你的账户名 ada 以确认删除'), { target: { value: 'ada' } });
    fireEvent.click(dialog().getByRole('button', { name: /确\s*定|OK/ }));
    expect(await screen.findByText('login page')).toBeTruthy();
    expect(screen.getByText('账户已删除！')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual(['/api/user/self']);
    expect(localStorage.getItem('user')).toBeNull();
  });

  it('an unbound login disappears once the server has unbound it', async () => {
    serve({ 'DELETE /api/user/self/bindings/github': null }, { github_id: '' });
    renderWithApp(ROUTES, '/personal');
    fireEvent.click(await screen.findByTestId('unbind-github'));
    await waitFor(() => expect(document.querySelector('.ant-popconfirm .ant-btn-primary')).toBeTruthy());
    fireEvent.click(document.querySelector('.ant-popconfirm .ant-btn-primary')!);
    expect(await screen.findByText('已解绑')).toBeTruthy();
    await waitFor(() => expect(screen.queryByTestId('unbind-github')).toBeNull());
  });
});
