// Issue 45: a finished video task has a Play action (an unfinished one, or a task that is no video, has none) that
// opens a player of its result: the gateway's content route read with the console session into a blob for a Sora
// video, the upstream's address for the others; the modal shows the video's length, size and price.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import TaskPage from './index.js';

const T = 1_760_000_000;
const row = (over: Record<string, unknown>) => ({
  id: 1,
  task_id: 'task_x',
  platform: 'sora',
  user_id: 7,
  channel_id: 4,
  action: 'generate',
  status: 'SUCCESS',
  fail_reason: '',
  result_url: '',
  content_url: '',
  submit_time: T,
  start_time: T,
  finish_time: T + 120,
  progress: '100%',
  quota: 600_000,
  created_at: T,
  properties: { input: 'a cat', model: 'sora-2', seconds: '8', size: '720x1280' },
  data: {},
  ...over,
});
const rows = [
  row({
    id: 4,
    task_id: 'task_sora',
    result_url: '/v1/videos/task_sora/content',
    content_url: '/api/task/self/task_sora/content',
  }),
  row({
    id: 3,
    task_id: 'task_kling',
    platform: 'kling',
    result_url: 'https://cdn.kling.example/v.mp4',
    quota: 250_000,
    properties: { input: 'a dog', model: 'kling-v2', seconds: 5 },
  }),
  row({ id: 2, task_id: 'task_running', status: 'IN_PROGRESS', finish_time: 0, progress: '30%' }),
  row({ id: 1, task_id: 'task_song', platform: 'suno', action: 'MUSIC', result_url: 'https://cdn.example/s.mp3' }),
];

let calls: Call[];
let contentStatus: number;

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('user', JSON.stringify({ id: 7, role: 1, username: 'alice', display_name: 'alice', status: 1 }));
  contentStatus = 200;
  calls = recordFetch(({ path }) => {
    if (path === '/api/task/self/task_sora/content')
      return new Response(new Blob(['MP4'], { type: 'video/mp4' }), { status: contentStatus });
    if (path.startsWith('/api/task/')) return { items: rows, total: rows.length, page: 1, page_size: 10 };
    return null;
  });
  vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: () => 'blob:video-1', revokeObjectURL: vi.fn() }));
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const status = { setup: true, display_in_currency: true, quota_per_unit: 500_000 };

async function openPlayer(taskId: string) {
  await act(async () => {
    fireEvent.click(screen.getByTestId(`play-${taskId}`));
  });
}

describe('task log: video player', () => {
  it('offers Play only for finished video tasks', async () => {
    renderWithApp([{ path: '/task', element: <TaskPage /> }], '/task', status);
    await screen.findByTestId('status-task_sora', {}, { timeout: 5000 });
    expect(screen.getByTestId('play-task_sora').textContent).toBe('播 放');
    expect(screen.getByTestId('play-task_kling')).toBeTruthy();
    expect(screen.queryByTestId('play-task_running')).toBeNull();
    expect(screen.queryByTestId('play-task_song')).toBeNull();
    // a song keeps its link; the relay's own Sora path is no link (it needs an API key)
    expect(screen.getByTestId('result-task_song').getAttribute('href')).toBe('https://cdn.example/s.mp3');
    expect(screen.queryByTestId('result-task_sora')).toBeNull();
    expect(screen.getByTestId('result-task_kling').getAttribute('href')).toBe('https://cdn.kling.example/v.mp4');
  });

  it("plays a Sora video from the console's content route, with its length, size and price", async () => {
    renderWithApp([{ path: '/task', element: <TaskPage /> }], '/task', status);
    await screen.findByTestId('play-task_sora', {}, { timeout: 5000 });
    await openPlayer('task_sora');
    const video = (await screen.findByTestId('task-video')) as HTMLVideoElement;
    expect(video.tagName).toBe('VIDEO');
    expect(video.getAttribute('src')).toBe('blob:video-1');
    expect(video.hasAttribute('controls')).toBe(true);
    expect(calls.filter((c) => c.url === '/api/task/self/task_sora/content')).toHaveLength(1);
    expect(screen.getByText('视频 task_sora')).toBeTruthy();
    expect(screen.getByTestId('video-seconds').textContent).toBe('8 秒');
    expect(screen.getByTestId('video-size').textContent).toBe('720x1280');
    expect(screen.getByTestId('video-price').textContent).toBe('$1.20');
  });

  it("plays another platform's video from its result URL; quota units when currency display is off", async () => {
    await i18n.changeLanguage('en');
    // the console's amounts follow the stored status (lib/render.ts)
    localStorage.setItem('display_in_currency', 'false');
    renderWithApp([{ path: '/task', element: <TaskPage /> }], '/task', { ...status, display_in_currency: false });
    await screen.findByTestId('play-task_kling', {}, { timeout: 5000 });
    expect(screen.getByTestId('play-task_kling').textContent).toBe('Play');
    await openPlayer('task_kling');
    const video = await screen.findByTestId('task-video');
    expect(video.getAttribute('src')).toBe('https://cdn.kling.example/v.mp4');
    expect(screen.getByText('Video task_kling')).toBeTruthy();
    expect(screen.getByTestId('video-seconds').textContent).toBe('5 s');
    expect(screen.getByTestId('video-size').textContent).toBe('-');
    expect(screen.getByTestId('video-price').textContent).toBe('250k');
    expect(calls.some((c) => c.url.includes('/content'))).toBe(false);
    // an address the browser cannot play is said so
    fireEvent.error(video);
    expect((await screen.findByTestId('video-failed')).textContent).toContain('Failed to load the video');
  });

  it('says so when the content route refuses', async () => {
    contentStatus = 404;
    renderWithApp([{ path: '/task', element: <TaskPage /> }], '/task', status);
    await screen.findByTestId('play-task_sora', {}, { timeout: 5000 });
    await openPlayer('task_sora');
    expect((await screen.findByTestId('video-failed')).textContent).toContain('视频加载失败');
    expect(screen.queryByTestId('task-video')).toBeNull();
  });
});
