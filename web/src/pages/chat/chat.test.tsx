import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import type { ChatLink } from '../../context/status.js';
import { recordFetch, renderWithApp } from '../../test/harness.js';
import ChatPage from './ChatPage.js';
import SiderBar from '../../components/SiderBar.js';
import Chat2Link, { chatNavigation } from './Chat2Link.js';
import { chatSidebarItems, fillChatLink, firstUsableKey, parseChats } from './links.js';

const USER = { id: 7, username: 'alice', display_name: 'alice', role: 1, status: 1, group: 'default' };
const token = (key: string, over: Record<string, unknown> = {}) => ({
  id: 1,
  key,
  status: 1,
  expired_time: -1,
  remain_quota: 0,
  unlimited_quota: true,
  ...over,
});
const CHATS: ChatLink[] = [
  { NextChat: 'https://next.example/#/?settings={"key":"{key}","url":"{address}"}' },
  { Lobe: 'https://lobe.example/?key={key}&base={address}' },
];

// happy-dom would otherwise really load the iframe's (made-up) address
const happyDom = (window as unknown as { happyDOM?: { settings: { disableIframePageLoading: boolean } } }).happyDOM;
if (happyDom) happyDom.settings.disableIframePageLoading = true;

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('user', JSON.stringify(USER));
});
afterEach(() => {
  cleanup();
  localStorage.clear();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  vi.useRealTimers();
});

function routes(element: React.ReactNode) {
  return [
    { path: '/chat/:id?', element },
    { path: '/chat2link', element },
    { path: '/token', element: <p>tokens page</p> },
    { path: '/login', element: <p>login page</p> },
  ];
}

describe('chat link helpers', () => {
  it('fills the key with its sk- prefix and the encoded address', () => {
    expect(fillChatLink('https://c.example/?k={key}&u={address}', 'abc', 'https://gw.example:3000')).toBe(
      'https://c.example/?k=sk-abc&u=https%3A%2F%2Fgw.example%3A3000',
    );
  });

  it('accepts only a list of one-entry {name: url} objects', () => {
    expect(parseChats('[{"A":"https://a/{key}"}]')).toEqual([{ index: 0, name: 'A', template: 'https://a/{key}' }]);
    expect(parseChats('not json')).toBeNull();
    expect(parseChats({ A: 'https://a' })).toBeNull();
    expect(parseChats([{ A: 1 }])).toBeNull();
    expect(parseChats([{ A: 'x', B: 'y' }])).toBeNull();
    expect(parseChats(undefined)).toEqual([]);
  });

  it('lists the sidebar entries by their /chat/:id route', () => {
    expect(chatSidebarItems(CHATS).map((i) => [i.key, i.label])).toEqual([
      ['/chat/0', 'NextChat'],
      ['/chat/1', 'Lobe'],
    ]);
    expect(chatSidebarItems('broken')).toEqual([]);
  });

  it('skips disabled, expired and exhausted tokens', () => {
    const now = 1_000_000;
    expect(
      firstUsableKey(
        [
          token('off', { status: 2 }),
          token('old', { expired_time: now - 1 }),
          token('empty', { unlimited_quota: false, remain_quota: 0 }),
          token('good', { unlimited_quota: false, remain_quota: 5, expired_time: now + 60 }),
        ],
        now,
      ),
    ).toBe('good');
    expect(firstUsableKey([token('off', { status: 2 })], now)).toBeNull();
  });
});

describe('sidebar', () => {
  it('lists the saved chat links after the playground and opens /chat/:id', async () => {
    recordFetch(() => []);
    const { router } = renderWithApp(
      [{ path: '*', element: <SiderBar collapsed={false} onCollapse={() => {}} /> }],
      '/token',
      { setup: true, chats: CHATS },
    );
    const links = screen.getAllByRole('menuitem').map((i) => i.textContent);
    expect(links.slice(0, 3)).toEqual(['操练场', 'NextChat', 'Lobe']);
    fireEvent.click(screen.getByText('Lobe'));
    await waitFor(() => expect(router.state.location.pathname).toBe('/chat/1'));
  });
});

describe('/chat/:id', () => {
  it('embeds the chosen link with the user key and the server address', async () => {
    const calls = recordFetch(({ path }) =>
      path === '/api/token/' ? [token('off', { status: 2 }), token('k123')] : null,
    );
    renderWithApp(routes(<ChatPage />), '/chat/1', {
      setup: true,
      chats: CHATS,
      server_address: 'https://gw.example/',
    });
    const frame = (await screen.findByTestId('chat-frame')) as HTMLIFrameElement;
    expect(frame.getAttribute('src')).toBe('https://lobe.example/?key=sk-k123&base=https%3A%2F%2Fgw.example');
    expect(calls.map((c) => c.url)).toEqual(['/api/token/?p=0&size=100']);
  });

  it('uses the page origin when no server address is set', async () => {
    recordFetch(() => [token('k9')]);
    renderWithApp(routes(<ChatPage />), '/chat/0', { setup: true, chats: CHATS });
    const frame = await screen.findByTestId('chat-frame');
    expect(frame.getAttribute('src')).toContain(encodeURIComponent(window.location.origin));
    expect(frame.getAttribute('src')).toContain('"key":"sk-k9"');
  });

  it('says the configuration is wrong when Chats is not a list of links', async () => {
    const calls = recordFetch(() => []);
    renderWithApp(routes(<ChatPage />), '/chat/0', { setup: true, chats: { broken: true } as never });
    expect(await screen.findByText('聊天链接配置错误，请联系管理员')).toBeTruthy();
    expect(calls).toEqual([]);
  });

  it('asks for a chat link when none is configured at that index', async () => {
    recordFetch(() => []);
    renderWithApp(routes(<ChatPage />), '/chat/5', { setup: true, chats: CHATS });
    expect(await screen.findByText('请联系管理员配置聊天链接')).toBeTruthy();
  });

  it('without a usable token says so and opens /token after 1.5 s', async () => {
    recordFetch(() => [token('off', { status: 2 })]);
    const { router } = renderWithApp(routes(<ChatPage />), '/chat/0', { setup: true, chats: CHATS });
    expect(
      (await screen.findAllByText('当前没有可用的启用令牌，请确认是否有令牌处于启用状态！')).length,
    ).toBeGreaterThan(0);
    // the message stays a moment (1.5 s) before the redirect
    await new Promise((r) => setTimeout(r, 1000));
    expect(router.state.location.pathname).toBe('/chat/0');
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'), { timeout: 3000 });
    // the route changes before the page renders: on a loaded machine the text comes a tick later
    expect(await screen.findByText('tokens page')).toBeTruthy();
  });

  it('sends a visitor who is not signed in to the login page', async () => {
    localStorage.removeItem('user');
    const calls = recordFetch(() => []);
    const { router } = renderWithApp(routes(<ChatPage />), '/chat/0', { setup: true, chats: CHATS });
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(calls).toEqual([]);
  });
});

describe('/chat2link', () => {
  it('opens the chosen Chats entry with the key and address', async () => {
    const open = vi.spyOn(chatNavigation, 'open').mockImplementation(() => {});
    recordFetch(() => [token('abc')]);
    renderWithApp(routes(<Chat2Link />), '/chat2link?id=1', {
      setup: true,
      chats: CHATS,
      server_address: 'http://h:3000',
    });
    await waitFor(() =>
      expect(open).toHaveBeenCalledWith('https://lobe.example/?key=sk-abc&base=http%3A%2F%2Fh%3A3000'),
    );
  });

  it('keeps new-api’s settings fragment for the legacy chat_link', async () => {
    const open = vi.spyOn(chatNavigation, 'open').mockImplementation(() => {});
    recordFetch(() => [token('abc')]);
    renderWithApp(routes(<Chat2Link />), '/chat2link', {
      setup: true,
      chat_link: 'https://next.example/',
      server_address: 'http://h:3000',
    });
    await waitFor(() =>
      expect(open).toHaveBeenCalledWith(
        'https://next.example/#/?settings={"key":"sk-abc","url":"http%3A%2F%2Fh%3A3000"}',
      ),
    );
  });
});
