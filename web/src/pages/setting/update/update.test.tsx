import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../../i18n/index.js';
import { recordFetch, renderWithApp } from '../../../test/harness.js';
import UpdateCheck from './UpdateCheck.js';
import { isNewer } from './releases.js';

beforeEach(async () => {
  await i18n.changeLanguage('zh');
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const render = (version = 'v1.2.0', repo = 'acme/gateway') =>
  renderWithApp([{ path: '*', element: <UpdateCheck version={version} repo={repo} /> }], '/setting?tab=other');

describe('update check', () => {
  it('compares versions numerically', () => {
    expect(isNewer('v1.10.0', 'v1.9.3')).toBe(true);
    expect(isNewer('v1.2.0', 'v1.2.0')).toBe(false);
    expect(isNewer('v1.1.9', 'v1.2')).toBe(false);
    expect(isNewer('nightly', 'v1.0.0')).toBe(true);
  });

  it('says 检查更新失败，请稍后再试 when GitHub cannot be reached', async () => {
    const calls = recordFetch(() => Promise.reject(new TypeError('Failed to fetch')));
    render();
    fireEvent.click(screen.getByTestId('update-check'));
    expect((await screen.findByTestId('update-outcome')).textContent).toBe('检查更新失败，请稍后再试');
    await waitFor(() => expect(screen.getAllByText('检查更新失败，请稍后再试').length).toBe(2)); // inline + toast
    expect(calls.map((c) => c.url)).toEqual(['https://api.github.com/repos/acme/gateway/releases/latest']);
  });

  it('treats a refusal (rate limit) as a failure too', async () => {
    recordFetch(() => new Response('{"message":"API rate limit exceeded"}', { status: 403 }));
    render();
    fireEvent.click(screen.getByTestId('update-check'));
    expect((await screen.findByTestId('update-outcome')).textContent).toBe('检查更新失败，请稍后再试');
  });

  it('shows the newer release and its notes as text', async () => {
    recordFetch(
      () =>
        new Response(
          JSON.stringify({
            tag_name: 'v1.3.0',
            name: 'Spring release',
            body: '<img src=x onerror=alert(1)> fixes',
            html_url: 'https://github.com/acme/gateway/releases/tag/v1.3.0',
          }),
          { status: 200 },
        ),
    );
    render();
    fireEvent.click(screen.getByTestId('update-check'));
    expect((await screen.findAllByText('新版本：v1.3.0')).length).toBeGreaterThan(0);
    expect(screen.getByText('<img src=x onerror=alert(1)> fixes')).toBeTruthy();
    expect(document.querySelector('img[src="x"]')).toBeNull();
    expect(screen.getByRole('link', { name: '前往 GitHub 查看' }).getAttribute('href')).toBe(
      'https://github.com/acme/gateway/releases/tag/v1.3.0',
    );
  });

  it('says the version is current', async () => {
    recordFetch(() => new Response(JSON.stringify({ tag_name: 'v1.2.0', body: '' }), { status: 200 }));
    render();
    fireEvent.click(screen.getByTestId('update-check'));
    expect((await screen.findByTestId('update-outcome')).textContent).toBe('已是最新版本：v1.2.0');
  });

  it('explains that no repository is configured instead of calling out', async () => {
    const calls = recordFetch(() => null);
    render('v1.2.0', '');
    fireEvent.click(screen.getByTestId('update-check'));
    expect((await screen.findByTestId('update-outcome')).textContent).toContain('VITE_RELEASES_REPO');
    expect(calls).toEqual([]);
  });
});
