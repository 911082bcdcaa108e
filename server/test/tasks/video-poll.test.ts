// Video tasks polled through the engine against the strict OpenAI video mock: a failed video (or one the upstream
// no longer knows) is refunded exactly once to the user AND the token with one refund row, even when two polls read
// the failure at once; a timed-out one is refunded once too; a finished one is never refunded.
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { tickTasks } from '../../src/services/tasks/poller.js';
import { nowSec } from '../../src/lib/time.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, logsOf, setOptions } from '../relay/fixtures.js';
import { startVideoMock, type VideoMock } from './video-mock.js';

const KEY = 'sora-poll-key';

await describeEachDb('video polling', (kind) => {
  let tdb: TestDatabase;
  let s: TestServer;
  let mock: VideoMock;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    s = await startTestServer({ database: tdb });
    mock = await startVideoMock([KEY]);
    await addChannel(s, { type: 55, key: KEY, baseUrl: mock.url, models: ['sora-2'] });
    await setOptions(s, { ModelPrice: { 'sora-2': 0.1 } });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await mock?.close();
    await tdb?.drop();
  });

  /** A 1792x1024 video of 8 s: 0.1 × 500000 × 8 × 1.666667 = 666666 */
  async function submitted() {
    const user = await addUser(s, { quota: 1_000_000 });
    const token = await addToken(s, user.id, { remain: 900_000, unlimited: false, name: 'poll' });
    const sdk = new OpenAI({ apiKey: `sk-${token.key}`, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 20_000 });
    const video = await sdk.videos.create({ model: 'sora-2', prompt: 'storm', seconds: '8', size: '1792x1024' });
    const row = await s.ctx.db
      .selectFrom('tasks')
      .select('private_data')
      .where('task_id', '=', video.id)
      .executeTakeFirstOrThrow();
    const upstreamId = (JSON.parse(row.private_data) as { upstream_task_id: string }).upstream_task_id;
    await flushLogs(s);
    return { user, token, sdk, video, upstreamId };
  }

  async function balances(userId: number, tokenId: number) {
    await flushLogs(s);
    const u = await s.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
    const t = await s.ctx.db
      .selectFrom('tokens')
      .select(['remain_quota', 'used_quota'])
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    return { user: Number(u.quota), token: Number(t.remain_quota), tokenUsed: Number(t.used_quota) };
  }

  const refundRows = async (userId: number) =>
    (await logsOf(s, userId)).filter((l) => l.type === 6).map((l) => [Number(l.quota), l.otherJson.task_id]);

  it('a failed video is refunded once, though two polls read the failure together', async () => {
    const { user, token, sdk, video, upstreamId } = await submitted();
    expect(await balances(user.id, token.id)).toEqual({ user: 333_334, token: 233_334, tokenUsed: 666_666 });
    mock.states.set(upstreamId, {
      status: 'failed',
      progress: 30,
      error: { code: 'moderation_blocked', message: 'blocked by moderation' },
    });
    await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await sdk.videos.retrieve(video.id)).toMatchObject({
      status: 'failed',
      error: { message: 'blocked by moderation' },
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 1_000_000, token: 900_000, tokenUsed: 0 });
    expect(await refundRows(user.id)).toEqual([[666_666, video.id]]);
  });

  it('a video the upstream no longer knows (404) fails and is refunded; a finished one is not', async () => {
    const lost = await submitted();
    const fine = await submitted();
    mock.states.set(fine.upstreamId, { status: 'completed', progress: 100 });
    // the upstream forgot this one: its GET answers 404
    mock.states.set(lost.upstreamId, { status: 'queued', http: 404 });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await lost.sdk.videos.retrieve(lost.video.id)).toMatchObject({ status: 'failed' });
    expect(await balances(lost.user.id, lost.token.id)).toEqual({ user: 1_000_000, token: 900_000, tokenUsed: 0 });
    expect(await refundRows(lost.user.id)).toHaveLength(1);
    expect(await fine.sdk.videos.retrieve(fine.video.id)).toMatchObject({ status: 'completed', progress: 100 });
    expect(await balances(fine.user.id, fine.token.id)).toEqual({ user: 333_334, token: 233_334, tokenUsed: 666_666 });
    expect(await refundRows(fine.user.id)).toEqual([]);
  });

  it('a video still running past TASK_TIMEOUT_MINUTES is failed and refunded once', async () => {
    const { user, token, sdk, video, upstreamId } = await submitted();
    mock.states.set(upstreamId, { status: 'in_progress', progress: 10 });
    const later = nowSec() + s.ctx.config.taskTimeoutMinutes * 60 + 60;
    await tickTasks(s.ctx, later);
    await tickTasks(s.ctx, later + 1);
    expect(await sdk.videos.retrieve(video.id)).toMatchObject({ status: 'failed' });
    expect(await balances(user.id, token.id)).toEqual({ user: 1_000_000, token: 900_000, tokenUsed: 0 });
    expect(await refundRows(user.id)).toEqual([[666_666, video.id]]);
  });
});
