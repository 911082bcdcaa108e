// Resetting the system access token: nothing is sent until the user confirms; the new token is then shown once
// with a copy button.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../../test/harness.js';
import AccessTokenReset from './AccessTokenReset.js';

let calls: Call[];
const onReset = vi.fn();

beforeEach(async () => {
  await i18n.changeLanguage('en');
  calls = recordFetch(({ path }) => (path === '/api/user/token' ? 'NEWTOKEN0123456789abcdef' : null));
});

afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const page = () =>
  renderWithApp([{ path: '/', element: <AccessTokenReset label="Reset token" onReset={onReset} /> }], '/');

describe('system access token reset', () => {
  it('asks first: cancelling sends nothing', async () => {
    page();
    fireEvent.click(await screen.findByText('Reset token'));
    await screen.findByText('Reset the system access token?');
    await act(async () => {
      fireEvent.click(screen.getByText('Cancel'));
    });
    expect(calls).toEqual([]);
    expect(onReset).not.toHaveBeenCalled();
  });

  it('after confirming, sends GET /api/user/token once and shows the new token with a copy button', async () => {
    const writeText = vi.fn(() => Promise.resolve());
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    page();
    fireEvent.click(await screen.findByText('Reset token'));
    fireEvent.click(await screen.findByTestId('confirm-reset-access-token'));
    const shown = (await screen.findByTestId('new-access-token')) as HTMLInputElement;
    expect(calls).toEqual([{ method: 'GET', url: '/api/user/token', body: undefined }]);
    expect(shown.value).toBe('NEWTOKEN0123456789abcdef');
    expect(onReset).toHaveBeenCalledTimes(1);
    fireEvent.click(screen.getByText('Copy'));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('NEWTOKEN0123456789abcdef'));
  });
});
