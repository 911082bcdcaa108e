// The console navigation: visibility rules by role, the phone menu drawer showing the sidebar's entries, and the
// /console entry path.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { TFunction } from 'i18next';
import i18n from '../../i18n/index.js';
import { renderWithApp } from '../../test/harness.js';
import { routes } from '../../routes.js';
import { ROLE_ADMIN, ROLE_ROOT, ROLE_USER, type StoredUser } from '../../context/user.js';
import SiderBar from '../SiderBar.js';
import MobileNav from './MobileNav.js';
import { buildNavGroups } from './navGroups.js';

const userWithRole = (role: number): StoredUser => ({
  id: role,
  username: `u${role}`,
  display_name: '',
  role,
  status: 1,
  group: 'default',
});

function signIn(role: number) {
  localStorage.setItem('user', JSON.stringify(userWithRole(role)));
}

const keysFor = (role: number, enable_data_export = false) =>
  buildNavGroups({ t: ((k: string) => k) as TFunction, status: { enable_data_export }, user: userWithRole(role) }).map(
    (g) => [g.key, g.items.map((i) => i.key)],
  );

/** Texts of the menu entries (not the group titles) inside `root`. */
const entryTexts = (root: HTMLElement) =>
  Array.from(root.querySelectorAll('.ant-menu-item')).map((el) => el.textContent?.trim() ?? '');

beforeEach(async () => {
  await i18n.changeLanguage('zh');
});

afterEach(() => {
  cleanup();
  localStorage.clear();
});

describe('navigation groups by role', () => {
  it('offers Settings to root only; admins keep the other admin entries; users see no admin group', () => {
    expect(keysFor(ROLE_ROOT, true)).toEqual([
      ['chat', ['/playground']],
      ['console', ['/detail', '/token', '/log']],
      ['admin', ['/channel', '/redemption', '/subscription', '/user', '/setting']],
      ['personal', ['/topup', '/personal']],
    ]);
    expect(keysFor(ROLE_ADMIN)).toEqual([
      ['chat', ['/playground']],
      ['console', ['/token', '/log']],
      ['admin', ['/channel', '/redemption', '/subscription', '/user']],
      ['personal', ['/topup', '/personal']],
    ]);
    expect(keysFor(ROLE_USER).map(([g]) => g)).toEqual(['chat', 'console', 'personal']);
  });

  it('the sidebar shows the Settings entry to root and not to an admin', () => {
    signIn(ROLE_ADMIN);
    renderWithApp([{ path: '*', element: <SiderBar collapsed={false} onCollapse={() => {}} /> }], '/token');
    expect(screen.getByText('用户管理')).toBeTruthy();
    expect(screen.queryByText('系统设置')).toBeNull();
    cleanup();
    signIn(ROLE_ROOT);
    renderWithApp([{ path: '*', element: <SiderBar collapsed={false} onCollapse={() => {}} /> }], '/token');
    expect(screen.getByText('系统设置')).toBeTruthy();
  });
});

describe('phone menu drawer', () => {
  for (const role of [ROLE_USER, ROLE_ADMIN, ROLE_ROOT]) {
    it(`opens with the desktop sidebar's entries for role ${role}`, async () => {
      signIn(role);
      const status = { setup: true, enable_data_export: true };
      const sider = renderWithApp(
        [{ path: '*', element: <SiderBar collapsed={false} onCollapse={() => {}} /> }],
        '/log',
        status,
      );
      const sidebarEntries = entryTexts(sider.view.container);
      expect(sidebarEntries.length).toBeGreaterThan(4);
      cleanup();

      renderWithApp([{ path: '*', element: <MobileNav /> }], '/log', status);
      expect(screen.queryByTestId('mobile-menu')).toBeNull();
      fireEvent.click(screen.getByTestId('mobile-menu-button'));
      const drawer = await screen.findByTestId('mobile-menu');
      // the site links come first, then exactly the sidebar's entries in the sidebar's order
      const site = ['首页', '控制台', '模型价格', '关于'];
      expect(entryTexts(drawer)).toEqual([...site, ...sidebarEntries]);
    });
  }

  it('navigates and closes when an entry is chosen', async () => {
    signIn(ROLE_USER);
    const { router } = renderWithApp([{ path: '*', element: <MobileNav /> }], '/log');
    fireEvent.click(screen.getByTestId('mobile-menu-button'));
    const drawer = await screen.findByTestId('mobile-menu');
    fireEvent.click(within(drawer).getByText('钱包'));
    expect(router.state.location.pathname).toBe('/topup');
    await waitFor(() => expect(document.querySelector('.ant-drawer-open')).toBeNull());
  });

  it('lists only the site links to a guest', async () => {
    renderWithApp([{ path: '*', element: <MobileNav /> }], '/');
    fireEvent.click(screen.getByTestId('mobile-menu-button'));
    expect(entryTexts(await screen.findByTestId('mobile-menu'))).toEqual(['首页', '控制台', '模型价格', '关于']);
  });
});

describe('/console', () => {
  it('leads to the dashboard', async () => {
    const consoleRoute = routes[0]!.children!.find((r) => r.path === 'console')!;
    const { router } = renderWithApp(
      [
        { path: '/console', element: consoleRoute.element },
        { path: '/detail', element: <div>dashboard</div> },
      ],
      '/console',
    );
    expect(await screen.findByText('dashboard')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/detail');
  });
});
