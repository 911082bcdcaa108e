// The drawing log's rows through TanStack Query (queries.ts): new filters or another page are a new query (one read
// each), and the query button reads the rows anew even when nothing changed — a task moves while the page is open
// (the poller), and the same filters keep the same query key, so the table would otherwise keep the cached rows.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import { restoreScreen, screenWidth } from '../../test/screen.js';
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
/** the total the server reports: over a page, so the pager offers page 2 */
let total = 1;

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('user', JSON.stringify({ id: 7, role: 1, username: 'u', display_name: 'u', status: 1 }));
  current = row('IN_PROGRESS', '50%');
  total = 1;
  calls = recordFetch(({ path }) =>
    path.startsWith('/api/mj/') ? { items: [current], total, page: 1, page_size: 10 } : null,
  );
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  restoreScreen();
  localStorage.clear();
});

const reads = () => calls.filter((c) => c.url.startsWith('/api/mj/self'));
const paramsOf = (c: Call) => Object.fromEntries(new URL(c.url, 'http://x').searchParams);

const renderPage = async () => {
  renderWithApp([{ path: '/midjourney', element: <MidjourneyPage /> }], '/midjourney');
  await screen.findByTestId('status-mj-moving', {}, { timeout: 5000 });
};

const clickQuery = () =>
  act(async () => {
    fireEvent.click(screen.getByTestId('tasklog-query'));
  });

/** Opens the antd Select and clicks the option with this text. */
async function pickOption(select: Element, text: string | RegExp) {
  const root = select.closest('.ant-select') ?? select;
  fireEvent.mouseDown(root.querySelector('.ant-select-selector, .ant-select-content') ?? root);
  const option = await screen.findByText(text, { selector: '.ant-select-item-option-content' });
  fireEvent.click(option);
}

describe('drawing log through queries', () => {
  it('the same filters queried again show the row as it is now', async () => {
    await renderPage();
    expect(screen.getByTestId('status-mj-moving').textContent).toBe('执行中');
    current = row('SUCCESS', '100%');
    await clickQuery();
    await vi.waitFor(() => expect(screen.getByTestId('status-mj-moving').textContent).toBe('成功'));
    expect(reads()).toHaveLength(2);
    expect(paramsOf(reads()[1]!).p).toBe('1');
  });

  it('the next page is a new query, and a new filter goes back to page 1 with it', async () => {
    total = 25;
    screenWidth(1440);
    await renderPage();
    expect(reads()).toHaveLength(1);
    await act(async () => {
      fireEvent.click(document.querySelector('.ant-pagination-item-2')!);
    });
    await waitFor(() => expect(reads()).toHaveLength(2));
    expect(paramsOf(reads()[1]!)).toMatchObject({ p: '2', page_size: '10' });

    await pickOption(screen.getByTestId('filter-status'), '失败');
    // choosing a filter only edits it: the list is read when the query button is pressed
    expect(reads()).toHaveLength(2);
    await clickQuery();
    await waitFor(() => expect(reads()).toHaveLength(3));
    expect(paramsOf(reads()[2]!)).toMatchObject({ p: '1', status: 'FAILURE' });
  });

  it('a new page size is remembered and reads page 1 at that size', async () => {
    total = 25;
    screenWidth(1440);
    await renderPage();
    await pickOption(document.querySelector('.ant-pagination-options .ant-select')!, /^20\b/);
    await waitFor(() => expect(reads()).toHaveLength(2));
    expect(paramsOf(reads()[1]!)).toMatchObject({ p: '1', page_size: '20' });
    expect(localStorage.getItem('page-size')).toBe('20');
  });

  it('reset reads the opening filters again', async () => {
    await renderPage();
    fireEvent.change(document.querySelector('input[name="task-id"]')!, { target: { value: 'mj-other' } });
    await clickQuery();
    await waitFor(() => expect(reads()).toHaveLength(2));
    expect(paramsOf(reads()[1]!).mj_id).toBe('mj-other');
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /重\s*置/ }));
    });
    await waitFor(() => expect(reads()).toHaveLength(3));
    expect(paramsOf(reads()[2]!).mj_id).toBeUndefined();
    expect((document.querySelector('input[name="task-id"]') as HTMLInputElement).value).toBe('');
  });
});
