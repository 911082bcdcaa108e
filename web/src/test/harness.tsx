// Shared page-test plumbing: a recording fetch stub and a render with the app's providers (query client, antd App
// with the feedback bridge, status and user contexts, a memory router).
import { render } from '@testing-library/react';
import { App } from 'antd';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createMemoryRouter, RouterProvider, type RouteObject } from 'react-router';
import { vi } from 'vitest';
import { StatusProvider, type Status } from '../context/status.js';
import { UserProvider } from '../context/user.js';
import { FeedbackBridge } from '../lib/feedback.js';

export interface Call {
  method: string;
  url: string;
  /** the JSON body, parsed */
  body?: unknown;
}

/**
 * Replaces fetch for the test: every call is recorded in the returned array (in order) and answered by `reply`. A
 * Response, or a promise (of a Response, or rejected), is returned as it is; any other value is sent as the data of a
 * success envelope.
 */
export function recordFetch(reply: (call: Call & { path: string }) => unknown): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal('fetch', (url: string, init: RequestInit = {}) => {
    const call: Call = {
      method: init.method ?? 'GET',
      url,
      body: init.body ? JSON.parse(String(init.body)) : undefined,
    };
    calls.push(call);
    // `path`: the url without its query, for the reply only (recorded calls keep the shape tests compare)
    const r = reply({ ...call, path: url.split('?')[0]! });
    if (r instanceof Response) return Promise.resolve(r);
    if (r instanceof Promise) return r;
    return Promise.resolve(
      new Response(JSON.stringify({ success: true, message: '', data: r ?? null }), { status: 200 }),
    );
  });
  return calls;
}

/** Renders `routes` at `path` inside the app's providers; returns the router (for its location). */
export function renderWithApp(routes: RouteObject[], path: string, status: Status = { setup: true }) {
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const view = render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <App>
        <FeedbackBridge />
        <StatusProvider initial={status}>
          <UserProvider>
            <RouterProvider router={router} />
          </UserProvider>
        </StatusProvider>
      </App>
    </QueryClientProvider>,
  );
  return { router, view };
}
