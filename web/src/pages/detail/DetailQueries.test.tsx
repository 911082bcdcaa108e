// The dashboard's usage data through TanStack Query (issue 46): the username filter applies with the query button,
// and the query button asks again even when nothing changed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import DetailPage from './index.js';

let calls: Call[];
const dataCalls = () => calls.filter((c) => c.url.startsWith('/api/data/?'));

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem(
    'user',
    JSON.stringify({ id: 1, role: 100, username: 'root', display_name: 'root', status: 1, group: 'default' }),
  );
  calls = recordFetch(({ path }) => {
    if (path === '/api/data/') return [];
    if (path === '/api/user/self') return { id: 1, username: 'root', quota: 0, used_quota: 0, request_count: 0 };
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('dashboard usage data', () => {
  it('applies the username with the query button, and asks again on a second click', async () => {
    renderWithApp([{ path: '/detail', element: <DetailPage /> }], '/detail', { setup: true, enable_data_export: true });
    await waitFor(() => expect(dataCalls()).toHaveLength(1), { timeout: 5000 });
    fireEvent.change(screen.getByPlaceholderText('用户名称'), { target: { value: ' alice ' } });
    // typing alone sends nothing
    expect(dataCalls()).toHaveLength(1);
    const button = screen.getByRole('button', { name: /查\s*询/ });
    fireEvent.click(button);
    await waitFor(() => expect(dataCalls()).toHaveLength(2));
    expect(dataCalls()[1]!.url).toContain('username=alice');
    // the button is in its loading state (and takes no click) until that answer is read
    await waitFor(() => expect(button.className).not.toContain('ant-btn-loading'));
    fireEvent.click(button);
    await waitFor(() => expect(dataCalls()).toHaveLength(3));
  });
});
