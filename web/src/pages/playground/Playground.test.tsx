// Playground ?expired=true shows the login page's not-logged-in/session-expired notice (spec §2 Login).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp } from '../../test/harness.js';
import Playground from './index.js';

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  vi.stubGlobal('fetch', () =>
    Promise.resolve(new Response(JSON.stringify({ success: true, message: '', data: [] }), { status: 200 })),
  );
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function renderAt(path: string) {
  renderWithApp([{ path: '/playground', element: <Playground /> }], path);
}

describe('playground session notice', () => {
  it('shows 未登录或登录已过期，请重新登录 with ?expired=true', async () => {
    renderAt('/playground?expired=true');
    await screen.findByTestId('playground-page');
    expect(screen.getByTestId('expired-notice').textContent).toContain('未登录或登录已过期，请重新登录');
  });

  it('uses the English login text too', async () => {
    await i18n.changeLanguage('en');
    renderAt('/playground?expired=true');
    await screen.findByTestId('playground-page');
    expect(screen.getByTestId('expired-notice').textContent).toContain(
      'Not logged in or the session has expired, please log in again',
    );
  });

  it('shows nothing without the query', async () => {
    renderAt('/playground');
    await screen.findByTestId('playground-page');
    expect(screen.queryByTestId('expired-notice')).toBeNull();
    cleanup();
    renderAt('/playground?expired=false');
    await screen.findByTestId('playground-page');
    expect(screen.queryByTestId('expired-notice')).toBeNull();
  });
});

describe('playground chat', () => {
  it("sends with the user's first model when the default is not theirs, and streams the answer in", async () => {
    const sse = [
      'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Bon"}}]}',
      'data: {"choices":[{"index":0,"delta":{"content":"jour"}}]}',
      'data: [DONE]',
      '',
    ].join('\n\n');
    const calls = recordFetch(({ path }) => {
      if (path === '/api/user/models') return ['ernie-x', 'glm-y'];
      if (path === '/api/user/self/groups') return { default: { desc: '默认分组', ratio: 1 } };
      if (path === '/pg/chat/completions')
        return new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } });
      return null;
    });
    renderAt('/playground');
    await screen.findByTestId('playground-page');
    await screen.findByText('ernie-x');
    fireEvent.change(screen.getByTestId('playground-input'), { target: { value: 'Say hello' } });
    fireEvent.click(screen.getByTestId('playground-send'));
    const answer = await screen.findByText('Bonjour');
    expect(answer.closest('[data-role=assistant]')?.getAttribute('data-status')).toBe('complete');
    const sent = calls.find((c) => c.url === '/pg/chat/completions');
    expect(sent?.body).toMatchObject({ model: 'ernie-x', stream: true });
    expect(JSON.stringify(sent?.body)).toContain('Say hello');
  });
});
