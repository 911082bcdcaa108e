// The notification settings save through a TanStack mutation (issue 46): one PUT /api/user/setting with the form's
// values, then the page is told to reload the caller's user.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import NotifySettings from './NotifySettings.js';

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('en');
  calls = recordFetch(() => null);
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('notification settings', () => {
  it('saves once with PUT and tells the page', async () => {
    const onSaved = vi.fn();
    renderWithApp(
      [
        {
          path: '/personal',
          element: (
            <NotifySettings setting={{ notify_type: 'email', quota_warning_threshold: 1000 }} onSaved={onSaved} />
          ),
        },
      ],
      '/personal',
    );
    fireEvent.click(await screen.findByRole('button', { name: /save/i }, { timeout: 5000 }));
    await waitFor(() => expect(onSaved).toHaveBeenCalledTimes(1));
    const puts = calls.filter((c) => c.method === 'PUT');
    expect(puts).toHaveLength(1);
    expect(puts[0]).toMatchObject({
      url: '/api/user/setting',
      body: { notify_type: 'email', quota_warning_threshold: 1000 },
    });
  });
});
