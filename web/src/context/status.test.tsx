// The console's first /api/status call leaves from index.html before the bundle runs (issue 46 point 15); the status
// context takes that answer instead of asking again, and asks itself when the early call failed.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { StatusProvider, useStatus } from './status.js';

function SiteName() {
  const { status, loaded } = useStatus();
  return <span data-testid="name">{loaded ? String(status.system_name) : 'loading'}</span>;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
  window.__statusPrefetch = undefined;
});

const envelope = (name: string) => ({ success: true, message: '', data: { system_name: name } });

describe('status context', () => {
  it('uses the early call of index.html, once, without a second request', async () => {
    const fetchSpy = vi.fn(() => Promise.resolve(new Response(JSON.stringify(envelope('Asked')))));
    vi.stubGlobal('fetch', fetchSpy);
    window.__statusPrefetch = Promise.resolve(envelope('Early') as never);
    render(
      <StatusProvider>
        <SiteName />
      </StatusProvider>,
    );
    expect(await screen.findByText('Early')).toBeTruthy();
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(window.__statusPrefetch).toBeUndefined();
  });

  it('asks the server when the early call failed', async () => {
    const fetchSpy = vi.fn(() => Promise.resolve(new Response(JSON.stringify(envelope('Asked')))));
    vi.stubGlobal('fetch', fetchSpy);
    window.__statusPrefetch = Promise.resolve(null);
    render(
      <StatusProvider>
        <SiteName />
      </StatusProvider>,
    );
    expect(await screen.findByText('Asked')).toBeTruthy();
    expect(fetchSpy).toHaveBeenCalledTimes(1);
    expect(String((fetchSpy.mock.calls[0] as unknown[])[0])).toBe('/api/status');
  });
});
