// The settings tabs as sections with contents (issue 46 point 11): each section's link targets its element, every
// field shows a help line; on a phone the tab bar is a picker (point 12).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { App } from 'antd';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import i18n from '../../i18n/index.js';
import { FeedbackBridge } from '../../lib/feedback.js';
import { StatusProvider } from '../../context/status.js';
import { recordFetch, renderWithApp } from '../../test/harness.js';
import { restoreScreen, screenWidth } from '../../test/screen.js';
import SystemTab from './SystemTab.js';
import SettingPage from './index.js';

beforeEach(async () => {
  await i18n.changeLanguage('en');
  recordFetch(({ path }) => {
    if (path === '/api/option/') return [{ key: 'RetryTimes', value: '0' }];
    if (path === '/api/custom-oauth-provider/') return [];
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  restoreScreen();
  localStorage.clear();
});

function renderTab() {
  render(
    <QueryClientProvider client={new QueryClient()}>
      <App>
        <FeedbackBridge />
        <StatusProvider initial={{ setup: true }}>
          <SystemTab options={{}} />
        </StatusProvider>
      </App>
    </QueryClientProvider>,
  );
}

describe('settings sections', () => {
  it('a wide screen lists the sections beside them, each link aiming at its section', async () => {
    screenWidth(1440);
    renderTab();
    const contents = screen.getByTestId('setting-contents');
    const links = Array.from(contents.querySelectorAll<HTMLAnchorElement>('a.ant-anchor-link-title'));
    expect(links.length).toBeGreaterThanOrEqual(10);
    for (const a of links) {
      const id = a.getAttribute('href')!.slice(1);
      expect(document.getElementById(id), id).not.toBeNull();
    }
    expect(links.map((a) => a.textContent)).toContain('SMTP');
  });

  it('every field of a section shows its help line', () => {
    screenWidth(1440);
    renderTab();
    const smtp = screen.getByTestId('section-smtp');
    expect(smtp.textContent).toContain('Usually 465 (SSL) or 587');
    expect(screen.getByTestId('section-login').textContent).toContain('Needs the GitHub OAuth App configured below');
  });

  it('on a phone the tabs are a picker, and the operation tab explains Retry times', async () => {
    screenWidth(390);
    localStorage.setItem('user', JSON.stringify({ id: 1, role: 100, username: 'root', status: 1 }));
    renderWithApp([{ path: '/setting', element: <SettingPage /> }], '/setting');
    expect(await screen.findByTestId('setting-tab-select', {}, { timeout: 5000 })).toBeTruthy();
    expect(document.querySelector('.ant-tabs')).toBeNull();
    expect(
      await screen.findByText(
        'How many times a failed upstream request is retried on another channel; 0: no retry',
        {},
        { timeout: 5000 },
      ),
    ).toBeTruthy();
  });
});
