// The top bar's language menu (issue 47): the offered languages in their own scripts; choosing one loads its file
// and shows the bar in it.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, screen } from '@testing-library/react';
import i18n from '../i18n/index.js';
import ja from '../i18n/locales/ja.json';
import { renderWithApp } from '../test/harness.js';
import { ThemeProvider } from '../context/theme.js';
import HeaderBar from './HeaderBar.js';

afterEach(async () => {
  cleanup();
  await i18n.changeLanguage('zh');
  localStorage.clear();
});

describe('language menu', () => {
  it('lists the languages in their own scripts and switches the rendered bar', async () => {
    await i18n.changeLanguage('zh');
    renderWithApp(
      [
        {
          path: '/',
          element: (
            <ThemeProvider>
              <HeaderBar />
            </ThemeProvider>
          ),
        },
      ],
      '/',
    );
    expect(await screen.findByRole('button', { name: '登 录' })).toBeTruthy();
    fireEvent.click(screen.getByTestId('language-menu'));
    await screen.findByTestId('language-ja');
    const items = document.querySelectorAll('[data-testid^="language-"]:not([data-testid="language-menu"])');
    const names = Array.from(items, (el) => el.textContent);
    expect(names).toEqual(['简体中文', '繁體中文', 'English', 'Français', '日本語', 'Русский', 'Tiếng Việt']);
    fireEvent.click(screen.getByText('日本語'));
    await screen.findByRole('button', { name: ja.common['nav.login'] });
    expect(i18n.language).toBe('ja');
    expect(document.documentElement.lang).toBe('ja');
  });
});
