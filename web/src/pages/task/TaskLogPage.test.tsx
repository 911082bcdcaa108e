// The drawing log and the task log render their rows (status and progress tags, the §9 duration colour, the image
// preview from the row's URL, prompt and failure reason, the record in a modal), send the filters as new-api's query
// parameters (milliseconds for the drawing log, seconds for the task log), and show channel and user to an admin only.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import type { TFunction } from 'i18next';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import { buildNavGroups } from '../../components/nav/navGroups.js';
import MidjourneyPage from '../midjourney/index.js';
import TaskPage from './index.js';
import { buildQuery, durationColor, durationSeconds, progressPercent } from './logic.js';

const T = 1_760_000_000;
const mjRows = [
  {
    id: 2,
    code: 1,
    user_id: 7,
    username: 'alice',
    channel_id: 3,
    channel_name: 'mj-one',
    action: 'IMAGINE',
    mj_id: 'mj-fast',
    prompt: 'a red fox',
    prompt_en: 'a red fox',
    description: '',
    submit_time: T * 1000,
    finish_time: T * 1000 + 30_000,
    start_time: 0,
    image_url: 'http://gw.example/mj/image/mj-fast',
    status: 'SUCCESS',
    progress: '100%',
    fail_reason: '',
    quota: 50000,
  },
  {
    id: 1,
    code: 1,
    user_id: 7,
    username: 'alice',
    channel_id: 3,
    action: 'UPSCALE',
    mj_id: 'mj-slow',
    prompt: 'a blue whale',
    prompt_en: '',
    description: '',
    submit_time: T * 1000,
    finish_time: T * 1000 + 90_000,
    start_time: 0,
    image_url: '',
    status: 'FAILURE',
    progress: '40%',
    fail_reason: 'banned prompt',
    quota: 50000,
  },
];
const taskRows = [
  {
    id: 5,
    task_id: 'task_abc',
    platform: 'suno',
    user_id: 7,
    username: 'alice',
    channel_id: 4,
    action: 'MUSIC',
    status: 'IN_PROGRESS',
    fail_reason: '',
    result_url: '',
    submit_time: T,
    start_time: T,
    finish_time: 0,
    progress: '60%',
    quota: 100000,
    created_at: T,
    data: [{ id: 'clip-1' }],
  },
  {
    id: 4,
    task_id: 'task_done',
    platform: 'suno',
    user_id: 7,
    channel_id: 4,
    action: 'LYRICS',
    status: 'SUCCESS',
    fail_reason: '',
    result_url: 'https://cdn.example/song.mp3',
    submit_time: T,
    start_time: T,
    finish_time: T + 45,
    progress: '100%',
    quota: 100000,
    created_at: T,
  },
];

let calls: Call[];
const setUser = (role: number) =>
  localStorage.setItem('user', JSON.stringify({ id: 7, role, username: 'alice', display_name: 'alice', status: 1 }));

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  setUser(1);
  calls = recordFetch(({ path }) => {
    if (path.startsWith('/api/mj/')) return { items: mjRows, total: 2, page: 1, page_size: 10 };
    if (path.startsWith('/api/task/')) return { items: taskRows, total: 2, page: 1, page_size: 10 };
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const listCalls = (prefix: string) => calls.filter((c) => c.url.startsWith(prefix));
const paramsOf = (c: Call) => Object.fromEntries(new URL(c.url, 'http://x').searchParams);

describe('rules', () => {
  it('times the duration in seconds and colours it red over 60 s (spec §9)', () => {
    expect(durationSeconds(1000, 61_000, 'ms')).toBe(60);
    expect(durationColor(60)).toBe('green');
    expect(durationColor(60.1)).toBe('red');
    expect(durationSeconds(10, 0, 's')).toBeNull();
    expect(progressPercent('40%')).toBe(40);
    expect(progressPercent('')).toBeNull();
  });

  it('builds the query: ms for the drawing log, s for tasks, channel for an admin only', () => {
    const f = {
      channel_id: '3',
      id: ' mj-1 ',
      status: 'FAILURE',
      action: 'IMAGINE',
      platform: 'suno',
      start: 100,
      end: 200,
    };
    expect(buildQuery('mj', f, true, 2, 20)).toEqual({
      p: 2,
      page_size: 20,
      start_timestamp: 100_000,
      end_timestamp: 200_000,
      mj_id: 'mj-1',
      status: 'FAILURE',
      action: 'IMAGINE',
      channel_id: '3',
    });
    expect(buildQuery('task', f, false, 1, 10)).toEqual({
      p: 1,
      page_size: 10,
      start_timestamp: 100,
      end_timestamp: 200,
      task_id: 'mj-1',
      status: 'FAILURE',
      action: 'IMAGINE',
      platform: 'suno',
    });
  });

  it('shows the sidebar entries only while drawing and tasks are enabled', () => {
    const keys = (enable_drawing: boolean, enable_task: boolean) =>
      buildNavGroups({ t: ((k: string) => k) as TFunction, status: { enable_drawing, enable_task }, user: null })
        .flatMap((g) => g.items)
        .map((i) => i.key);
    expect(keys(true, true)).toEqual(expect.arrayContaining(['/midjourney', '/task']));
    expect(keys(false, true)).not.toContain('/midjourney');
    expect(keys(true, false)).not.toContain('/task');
  });
});

describe('drawing log', () => {
  it("a user's own rows: status, progress, duration colours, image, prompt and failure reason", async () => {
    renderWithApp([{ path: '/midjourney', element: <MidjourneyPage /> }], '/midjourney');
    await screen.findByTestId('status-mj-fast', {}, { timeout: 5000 });
    expect(listCalls('/api/mj/self')).toHaveLength(1);
    const p = paramsOf(listCalls('/api/mj/self')[0]!);
    // the last 30 days, in milliseconds
    expect(Number(p.end_timestamp) - Number(p.start_timestamp)).toBeGreaterThan(30 * 86400 * 1000);
    expect(p.channel_id).toBeUndefined();
    expect(screen.getByTestId('status-mj-fast').textContent).toBe('成功');
    expect(screen.getByTestId('status-mj-slow').textContent).toBe('失败');
    expect(screen.getByTestId('duration-mj-fast').className).toContain('green');
    expect(screen.getByTestId('duration-mj-fast').textContent).toBe('30 秒');
    expect(screen.getByTestId('duration-mj-slow').className).toContain('red');
    expect(screen.getByTestId('progress-mj-slow').textContent).toContain('40%');
    expect(screen.getByAltText('mj-fast').getAttribute('src')).toBe('http://gw.example/mj/image/mj-fast');
    expect(screen.getByTestId('fail-mj-slow').textContent).toBe('banned prompt');
    expect(screen.queryByText('渠道')).toBeNull();
    fireEvent.click(screen.getByTestId('prompt-mj-slow'));
    expect((await screen.findByTestId('tasklog-text')).textContent).toBe('a blue whale');
  });

  it('an admin sees every row with channel and user, and the filters go to /api/mj/', async () => {
    setUser(10);
    renderWithApp([{ path: '/midjourney', element: <MidjourneyPage /> }], '/midjourney');
    await screen.findByTestId('status-mj-fast', {}, { timeout: 5000 });
    expect(screen.getAllByText('渠道').length).toBeGreaterThan(0);
    expect(screen.getAllByText('alice').length).toBeGreaterThan(0);
    fireEvent.change(document.querySelector('input[name="task-id"]')!, { target: { value: 'mj-slow' } });
    fireEvent.change(document.querySelector('input[name="channel-id"]')!, { target: { value: '3' } });
    await act(async () => {
      fireEvent.click(screen.getByTestId('tasklog-query'));
    });
    await vi.waitFor(() => expect(listCalls('/api/mj/?')).toHaveLength(2));
    expect(paramsOf(listCalls('/api/mj/?')[1]!)).toMatchObject({ mj_id: 'mj-slow', channel_id: '3', p: '1' });
  });
});

describe('task log', () => {
  it('rows with progress, duration, result link and the full record; seconds in the query', async () => {
    renderWithApp([{ path: '/task', element: <TaskPage /> }], '/task');
    await screen.findByTestId('status-task_abc', {}, { timeout: 5000 });
    const p = paramsOf(listCalls('/api/task/self')[0]!);
    // today from 00:00, in seconds
    expect(Number(p.start_timestamp)).toBeLessThan(1e11);
    expect(screen.getByTestId('status-task_abc').textContent).toBe('执行中');
    expect(screen.getByTestId('progress-task_abc').textContent).toContain('60%');
    expect(screen.queryByTestId('duration-task_abc')).toBeNull();
    expect(screen.getByTestId('duration-task_done').className).toContain('green');
    expect(screen.getByTestId('result-task_done').getAttribute('href')).toBe('https://cdn.example/song.mp3');
    fireEvent.click(screen.getByTestId('detail-task_abc'));
    const text = (await screen.findByTestId('tasklog-text')).textContent ?? '';
    expect(JSON.parse(text)).toMatchObject({ task_id: 'task_abc', data: [{ id: 'clip-1' }] });
    // a user has no channel filter; the platform and task id go to /api/task/self
    expect(document.querySelector('input[name="channel-id"]')).toBeNull();
    fireEvent.change(document.querySelector('input[name="platform"]')!, { target: { value: 'suno' } });
    fireEvent.change(document.querySelector('input[name="task-id"]')!, { target: { value: 'task_done' } });
    await act(async () => {
      fireEvent.click(screen.getByTestId('tasklog-query'));
    });
    await vi.waitFor(() => expect(listCalls('/api/task/self')).toHaveLength(2));
    expect(paramsOf(listCalls('/api/task/self')[1]!)).toMatchObject({ platform: 'suno', task_id: 'task_done' });
  });

  it('speaks English', async () => {
    await i18n.changeLanguage('en');
    renderWithApp([{ path: '/task', element: <TaskPage /> }], '/task');
    await screen.findByTestId('status-task_abc', {}, { timeout: 5000 });
    expect(screen.getByTestId('status-task_done').textContent).toBe('Success');
    expect(screen.getByText('Task log')).toBeTruthy();
  });
});
