// The usage-limits pieces of the console: the list's tags (used / limit, reset time, where a limit comes from), the
// folded section's summary, and a save that sends the settings only when they changed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { useState } from 'react';
import i18n from '../../i18n/index.js';
import { recordFetch, type Call } from '../../test/harness.js';
import LimitTags from './LimitTags.js';
import LimitsSection from './LimitsSection.js';
import { limitsPath, saveLimits, tokenLimits, type LimitSettings } from './api.js';

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('en');
  calls = recordFetch(({ path }) =>
    path === '/api/token/limits'
      ? { 5: { rpm: { limit: 3, used: 1, scope: 'user' }, tpm: null, budget: null } }
      : { settings: {} },
  );
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('usage limits in the console', () => {
  it('shows the budget used / limit with its period, and the rates with their origin', () => {
    render(
      <LimitTags
        status={{
          rpm: { limit: 3, used: 1, scope: 'user' },
          tpm: null,
          budget: {
            limit: 1000,
            used: 1000,
            scope: 'token',
            period: 'daily',
            reset: 'calendar',
            resetAt: 1_900_000_000,
          },
        }}
      />,
    );
    const tags = screen.getByTestId('limit-tags').textContent ?? '';
    expect(tags).toMatch(/^Used .+ \/ .+ · Daily/);
    // 1000 quota at 500,000 per dollar: both sides in the limit's precision, not "$0.00"
    expect(tags).toContain('Used $0.0020 / $0.0020');
    expect(tags).toContain('3 req/min (user or group)');
    expect(tags).not.toContain('rolling');
  });

  it('a rolling budget says so, and before its first charge that its window has not started', async () => {
    render(
      <LimitTags
        status={{
          rpm: null,
          tpm: null,
          budget: { limit: 1000, used: 0, scope: 'token', period: 'weekly', reset: 'rolling', resetAt: null },
        }}
      />,
    );
    expect(screen.getByTestId('limit-tags').textContent).toMatch(/^Used .+ \/ .+ · Weekly \(rolling\)$/);
    fireEvent.mouseEnter(screen.getByText(/Weekly/));
    expect(await screen.findByText('Starts with the first charge')).toBeTruthy();
  });

  it('shows a dash without limits, and the folded section sums up what is set', () => {
    render(<LimitTags status={{ rpm: null, tpm: null, budget: null }} />);
    expect(screen.getByText('-')).toBeTruthy();
    render(<LimitsSection value={{ rpm: 10, budget: 500, period: 'weekly' }} onChange={() => undefined} />);
    expect(screen.getByTestId('limits-summary').textContent).toBe('10 req/min · 500 / Weekly');
  });

  it('the section’s reset choice reaches the saved body; changing only the reset is a change', async () => {
    let latest: LimitSettings = {};
    function Editor() {
      const [v, setV] = useState<LimitSettings>({ budget: 500, period: 'daily' });
      latest = v;
      return <LimitsSection value={v} onChange={setV} />;
    }
    render(<Editor />);
    fireEvent.click(screen.getByText('Limits'));
    const select = await screen.findByTestId('limits-reset');
    expect(select.textContent).toContain('Calendar');
    fireEvent.mouseDown(select.querySelector('.ant-select-selector') ?? select);
    fireEvent.click(await screen.findByText('Rolling (from the first charge)'));
    await waitFor(() => expect(latest).toEqual({ budget: 500, period: 'daily', reset: 'rolling' }));
    expect(screen.getByTestId('limits-summary').textContent).toBe('500 / Daily (rolling)');

    const path = limitsPath('user', 9);
    expect(await saveLimits(path, latest, { budget: 500, period: 'daily' })).toBeNull();
    expect(calls).toEqual([
      {
        method: 'PUT',
        url: '/api/user/9/limits',
        body: { rpm: 0, tpm: 0, budget: 500, period: 'daily', reset: 'rolling' },
      },
    ]);
    // the server stores no reset for calendar: loaded without one, calendar is no change
    expect(
      await saveLimits(path, { budget: 500, period: 'daily', reset: 'calendar' }, { budget: 500, period: 'daily' }),
    ).toBeNull();
    expect(calls).toHaveLength(1);
  });

  it('saves only changed settings, with zeros for the limits removed', async () => {
    const path = limitsPath('token', 5);
    expect(await saveLimits(path, { rpm: 2 }, { rpm: 2 })).toBeNull();
    expect(calls).toEqual([]);
    expect(await saveLimits(path, { tpm: 100 }, { rpm: 2 })).toBeNull();
    expect(calls).toEqual([
      { method: 'PUT', url: '/api/token/5/limits', body: { rpm: 0, tpm: 100, budget: 0, period: '', reset: '' } },
    ]);
    expect(await tokenLimits([5, 6])).toEqual({
      5: { rpm: { limit: 3, used: 1, scope: 'user' }, tpm: null, budget: null },
    });
    expect(calls[1]!.url).toBe('/api/token/limits?ids=5%2C6');
  });
});
