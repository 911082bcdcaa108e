// The footer's custom HTML follows the status context: it appears whenever /api/status answers. new-api polls its
// localStorage copy 5 times at 200 ms (spec §9 Timing) and keeps the credit line when the answer is slower; here
// there is no polling to outlast (new-api-compat.md §11.5).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, render, screen } from '@testing-library/react';
import i18n from '../i18n/index.js';
import { StatusProvider } from '../context/status.js';
import Footer from './Footer.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('footer', () => {
  it('shows the credit line until the status answers, then the custom HTML, however late the answer', async () => {
    await i18n.changeLanguage('zh');
    let answer!: (r: Response) => void;
    vi.stubGlobal(
      'fetch',
      vi.fn(() => new Promise<Response>((resolve) => (answer = resolve))),
    );
    render(
      <StatusProvider>
        <Footer />
      </StatusProvider>,
    );
    const footer = screen.getByTestId('footer');
    expect(footer.querySelector('.custom-footer')).toBeNull();
    // answered after any number of 200 ms polls would have given up
    await act(async () => {
      answer(
        new Response(
          JSON.stringify({ success: true, message: '', data: { setup: true, footer_html: '<b>Site footer</b>' } }),
        ),
      );
    });
    expect((await screen.findByText('Site footer')).tagName).toBe('B');
    expect(localStorage.getItem('footer_html')).toBe('<b>Site footer</b>');
  });
});
