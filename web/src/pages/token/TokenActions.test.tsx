// Tokens page: the delete request after its confirmation, money as the user reads it, and the drawer's expiry picker
// and dollar quota field turned into the body new-api expects.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import TokenPage from './index.js';

const token = (id: number, remain: number, used: number) => ({
  id,
  key: `key${id}abcdefghijklmnopqrstuvwxyz`,
  status: 1,
  name: `tok${id}`,
  created_time: 1700000000,
  expired_time: -1,
  remain_quota: remain,
  unlimited_quota: false,
  model_limits_enabled: false,
  model_limits: '',
  allow_ips: '',
  used_quota: used,
  group: '',
});

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/token/' && method === 'GET') return [token(1, 2500000, 125000), token(2, 0, 0)];
    if (path === '/api/token/1' && method === 'GET') return token(1, 2500000, 125000);
    if (path === '/api/token/1/limits' && method === 'GET') return { settings: { rpm: 7 } };
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const renderPage = async () => {
  renderWithApp([{ path: '/token', element: <TokenPage /> }], '/token');
  await screen.findByText('tok2', {}, { timeout: 5000 });
};
const writes = () => calls.filter((c) => c.method !== 'GET');

/**
 * Waits until an antd element's opening motion has left its first step: happy-dom runs no CSS transition, and an event
 * fired into the fields while rc-motion moves from "start" to "active" can be lost (the change never reaches React).
 */
const motionSettled = (el: Element) =>
  waitFor(() => expect(el.className).not.toMatch(/-(enter|appear)-(prepare|start)\b/));

/** Opens the antd Select inside `within` and clicks the option with this text. */
async function pickOption(within: Element, text: string) {
  const select = within.closest('.ant-select') ?? within.querySelector('.ant-select')!;
  fireEvent.mouseDown(select.querySelector('.ant-select-selector, .ant-select-content') ?? select);
  const option = await screen.findByText(text, { selector: '.ant-select-item-option-content' });
  await motionSettled(option.closest('.ant-select-dropdown')!);
  fireEvent.click(option);
}

describe('tokens page', () => {
  it('shows remaining and used quota as dollars', async () => {
    await renderPage();
    const row = within(screen.getByText('tok1').closest('tr')!);
    expect(row.getByText('$5.00')).toBeTruthy();
    expect(row.getByText('$0.25')).toBeTruthy();
  });

  it('deletes with DELETE /api/token/:id only after the confirmation', async () => {
    await renderPage();
    fireEvent.click(screen.getByTestId('token-delete-1'));
    await screen.findByText('确定是否要删除此令牌「tok1」？');
    expect(writes()).toEqual([]);
    await act(async () => {
      fireEvent.click(screen.getByTestId('token-delete-confirm-1'));
    });
    await waitFor(() => expect(writes()).toEqual([{ method: 'DELETE', url: '/api/token/1', body: undefined }]));
  });

  it('creates a token from a dollar quota and the "one day" expiry shortcut', async () => {
    await renderPage();
    fireEvent.click(screen.getByTestId('token-add'));
    const form = within(await screen.findByTestId('token-form', {}, { timeout: 5000 }));
    fireEvent.change(form.getByPlaceholderText('请输入名称'), { target: { value: 'mine' } });
    const quota = screen.getByTestId('token-quota') as HTMLInputElement;
    expect(quota.value).toBe('1'); // the default 500 000 quota, typed as dollars
    fireEvent.change(quota, { target: { value: '2.5' } });
    expect(screen.getByTestId('token-quota-units').textContent).toBe('= 1,250,000 额度');
    const before = Math.floor(Date.now() / 1000);
    fireEvent.click(form.getByText(/^一\s*天$/));
    expect((screen.getByTestId('token-expiry') as HTMLInputElement).value).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/,
    );
    await act(async () => {
      fireEvent.click(screen.getByTestId('token-submit'));
    });
    await waitFor(() => expect(writes()).toHaveLength(1));
    const [post] = writes();
    expect(post).toMatchObject({
      method: 'POST',
      url: '/api/token/',
      body: { name: 'mine', remain_quota: 1250000, unlimited_quota: false },
    });
    expect(post!.body).not.toHaveProperty('usage_limits'); // no limits set: new-api's body as it was
    const expiry = (post!.body as { expired_time: number }).expired_time;
    expect(expiry - before).toBeGreaterThanOrEqual(86400 - 1);
    expect(expiry - before).toBeLessThanOrEqual(86400 + 5);
  });

  it('creates every token of a batch with the drawer’s limits in its own create request', async () => {
    await renderPage();
    fireEvent.click(screen.getByTestId('token-add'));
    const form = within(await screen.findByTestId('token-form', {}, { timeout: 5000 }));
    fireEvent.change(form.getByPlaceholderText('请输入名称'), { target: { value: 'team' } });
    await pickOption(screen.getByText('新建数量').closest('.ant-form-item')!, '自定义');
    fireEvent.change(form.getByPlaceholderText('数量'), { target: { value: '3' } });
    fireEvent.click(form.getByText('用量限制'));
    await motionSettled(screen.getByTestId('limits-section').querySelector('.ant-collapse-panel')!);
    fireEvent.change(screen.getByTestId('limits-rpm'), { target: { value: '30' } });
    fireEvent.change(screen.getByTestId('limits-budget'), { target: { value: '2' } }); // dollars
    await pickOption(screen.getByTestId('limits-period').closest('.ant-select')!, '每周');
    expect(screen.getByTestId('limits-summary').textContent).toBe('30 次/分 · 1000000 / 每周');
    await act(async () => {
      fireEvent.click(screen.getByTestId('token-submit'));
    });
    await waitFor(() => expect(writes()).toHaveLength(3));
    const posts = writes();
    // three creates and nothing else: no separate limits request that could fail after the tokens exist
    expect(posts.map((p) => [p.method, p.url])).toEqual(Array(3).fill(['POST', '/api/token/']));
    expect(posts.map((p) => (p.body as { name: string }).name)).toEqual([
      'team',
      expect.stringMatching(/^team-\w{6}$/),
      expect.stringMatching(/^team-\w{6}$/),
    ]);
    for (const p of posts)
      expect((p.body as { usage_limits: unknown }).usage_limits).toEqual({
        rpm: 30,
        tpm: 0,
        budget: 1_000_000,
        period: 'weekly',
        reset: 'calendar',
      });
  });

  it('shows the new keys once in a dialog, whole, with copy buttons', async () => {
    calls = recordFetch(({ method, path }) => {
      if (path === '/api/token/' && method === 'GET') return [token(1, 2500000, 125000), token(2, 0, 0)];
      if (path === '/api/token/' && method === 'POST') return token(9, 0, 0);
      return null;
    });
    const writeText = vi.fn(() => Promise.resolve());
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    await renderPage();
    fireEvent.click(screen.getByTestId('token-add'));
    const form = within(await screen.findByTestId('token-form', {}, { timeout: 5000 }));
    fireEvent.change(form.getByPlaceholderText('请输入名称'), { target: { value: 'new' } });
    await act(async () => {
      fireEvent.click(screen.getByTestId('token-submit'));
    });
    const key = await screen.findByTestId('created-key');
    expect(key.textContent).toBe('sk-key9abcdefghijklmnopqrstuvwxyz');
    expect(screen.getByText('令牌已创建')).toBeTruthy();
    fireEvent.click(screen.getByTestId('created-key-copy'));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('sk-key9abcdefghijklmnopqrstuvwxyz'));
    // closing it (a motion happy-dom does not run to its end) is covered by the e2e token flow
  });

  it('"never" clears the picker and sends expired_time -1', async () => {
    await renderPage();
    fireEvent.click(screen.getByTestId('token-edit-1'));
    const form = within(await screen.findByTestId('token-form', {}, { timeout: 5000 }));
    await waitFor(() => expect((screen.getByTestId('token-quota') as HTMLInputElement).value).toBe('5'));
    fireEvent.click(form.getByText(/^一\s*天$/));
    fireEvent.click(form.getAllByText('永不过期')[0]!);
    expect((screen.getByTestId('token-expiry') as HTMLInputElement).value).toBe('');
    await act(async () => {
      fireEvent.click(screen.getByTestId('token-submit'));
    });
    await waitFor(() => expect(writes()).toHaveLength(1));
    expect(writes()[0]).toMatchObject({
      method: 'PUT',
      url: '/api/token/',
      body: { id: 1, expired_time: -1, remain_quota: 2500000 },
    });
  });

  it('edits a token: its stored name in the drawer, PUT with its id, the list read again, limits left alone', async () => {
    await renderPage();
    const listReads = () => calls.filter((c) => c.method === 'GET' && c.url.startsWith('/api/token/?')).length;
    fireEvent.click(screen.getByTestId('token-edit-1'));
    const name = (await screen.findByDisplayValue('tok1')) as HTMLInputElement;
    await motionSettled(name.closest('.ant-drawer-content-wrapper') ?? name);
    fireEvent.change(name, { target: { value: 'renamed' } });
    const before = listReads();
    await act(async () => {
      fireEvent.click(screen.getByTestId('token-submit'));
    });
    expect(await screen.findByText('令牌更新成功！')).toBeTruthy();
    // the limits were not changed: only the token is written
    expect(writes()).toEqual([
      { method: 'PUT', url: '/api/token/', body: expect.objectContaining({ id: 1, name: 'renamed' }) },
    ]);
    await waitFor(() => expect(listReads()).toBeGreaterThan(before));
  });
});
