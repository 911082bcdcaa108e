// The query button of the drawing log reads the rows anew even when the filters did not change: a task moves while
// the page is open (the poller), and the same filters keep the same query key, so without an explicit refetch the
// table would keep the cached rows.
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import MidjourneyPage from '../midjourney/index.js';

const row = (status: string, progress: string) => ({
  id: 1,
  code: 1,
  user_id: 7,
  action: 'IMAGINE',
  mj_id: 'mj-moving',
  prompt: 'a lighthouse',
  prompt_en: '',
  description: '',
  submit_time: Date.now(),
  finish_time: 0,
  start_time: 0,
  image_url: '',
  status,
  progress,
  fail_reason: '',
  quota: 50000,
  channel_id: 1,
});

let calls: Call[];
let current = row('IN_PROGRESS', '50%');

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('user', JSON.stringify({ id: 7, role: 1, username: 'u', display_name: 'u', status: 1 }));
  calls = recordFetch(({ path }) =>
    path.startsWith('/api/mj/') ? { items: [current], total: 1, page: 1, page_size: 10 } : null,
  );
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

it('the same filters queried again show the row as it is now', async () => {
  renderWithApp([{ path: '/midjourney', element: <MidjourneyPage /> }], '/midjourney');
  expect((await screen.findByTestId('status-mj-moving', {}, { timeout: 5000 })).textContent).toBe('执行中');
  current = row('SUCCESS', '100%');
  await act(async () => {
    fireEvent.click(screen.getByTestId('tasklog-query'));
  });
  await vi.waitFor(() => expect(screen.getByTestId('status-mj-moving').textContent).toBe('成功'));
  const reads = calls.filter((c) => c.url.startsWith('/api/mj/self'));
  expect(reads).toHaveLength(2);
  expect(new URL(reads[1]!.url, 'http://x').searchParams.get('p')).toBe('1');
});
