// The Midjourney poller and callbacks against the strict midjourney-proxy mock, on every database: progress, image URL
// and buttons follow the upstream; a FAILURE refunds once (user AND token, one type-6 row) while two pollers run over
// the same database; an id nobody asked about is ignored; the 1 h timeout fails and refunds once; the notify callback
// is verified and idempotent; the image route streams the stored image only from a public address.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { userUrlFetch } from '../../src/lib/safe-fetch.js';
import { nowSec } from '../../src/lib/time.js';
import { mjNotifySignature, MJ_TIMEOUT_REASON } from '../../src/relay/providers/midjourney/index.js';
import { pollMidjourney } from '../../src/relay/tasks/mj-poll.js';
import { tickTasks } from '../../src/services/tasks/poller.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { MJ_MOCK_PNG, MjProxyMock } from '../helpers/mj-proxy-mock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, logsOf } from '../relay/fixtures.js';

const SECRET = 'mj-poll-secret';

await describeEachDb('midjourney polling', (kind) => {
  let tdb: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  let mock: MjProxyMock;
  let channelId: number;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    a = await startTestServer({ database: tdb });
    // SQLite: one gateway per database file; its two concurrent polls stand for two pollers
    b = kind === 'sqlite' ? a : await startTestServer({ database: tdb });
    mock = await MjProxyMock.start({ secret: SECRET });
    channelId = await addChannel(a, { type: 2, key: SECRET, baseUrl: mock.url, models: ['mj_imagine'] });
    await channelsChanged(a);
    if (b !== a) await channelsChanged(b);
  });
  afterAll(async () => {
    if (b !== a) await b?.close();
    await a?.close();
    await mock?.close();
    await tdb?.drop();
  });

  async function submitted(prompt = 'a lighthouse') {
    const user = await addUser(a, { quota: 1_000_000 });
    const token = await addToken(a, user.id, { remain: 200_000, unlimited: false, name: 'poll' });
    const res = await fetch(`${a.url}/mj/submit/imagine`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt }),
    });
    const body = (await res.json()) as { code: number; result: string };
    expect(body.code).toBe(1);
    await flushLogs(a);
    return { user, token, id: body.result };
  }

  async function balances(userId: number, tokenId: number) {
    await flushLogs(a);
    const u = await a.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
    const t = await a.ctx.db
      .selectFrom('tokens')
      .select(['remain_quota', 'used_quota'])
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    return { quota: Number(u.quota), remain: Number(t.remain_quota), tokenUsed: Number(t.used_quota) };
  }

  const row = (mjId: string) =>
    a.ctx.db.selectFrom('midjourneys').selectAll().where('mj_id', '=', mjId).executeTakeFirstOrThrow();

  it('IN_PROGRESS then SUCCESS: progress, image, buttons and times follow; strays ignored; the charge stays', async () => {
    const t = await submitted();
    mock.advance(t.id);
    mock.advance(t.id);
    mock.strayIds = ['1234567890'];
    mock.addTask({ id: '1234567890', status: 'FAILURE', failReason: 'not ours' });
    try {
      // registered as a step of the poller's tick
      expect((await tickTasks(a.ctx, nowSec())).leased).toBe(true);
    } finally {
      mock.strayIds = [];
    }
    expect(await row(t.id)).toMatchObject({
      status: 'IN_PROGRESS',
      progress: '50%',
      image_url: `${mock.url}/image/${t.id}.png`,
    });
    const listCall = mock.requests.filter((r) => r.path === '/mj/task/list-by-condition').at(-1)!;
    expect(listCall.headers['mj-api-secret']).toBe(SECRET);
    expect((listCall.body as { ids: string[] }).ids).toContain(t.id);
    mock.advance(t.id);
    await pollMidjourney(a.ctx, nowSec());
    const done = await row(t.id);
    expect(done).toMatchObject({ status: 'SUCCESS', progress: '100%' });
    expect(JSON.parse(done.buttons)).toHaveLength(8);
    expect(Number(done.finish_time)).toBe(mock.now);
    expect(await balances(t.user.id, t.token.id)).toEqual({ quota: 950_000, remain: 150_000, tokenUsed: 50_000 });
    // the owner reads it with the gateway's image URL (MjForwardUrlEnabled, on by default), without a rand once done
    const f = await fetch(`${a.url}/mj/task/${t.id}/fetch`, { headers: { authorization: `Bearer sk-${t.token.key}` } });
    const dto = (await f.json()) as { status: string; imageUrl: string; buttons: unknown[] };
    expect(dto.status).toBe('SUCCESS');
    expect(dto.imageUrl).toBe(`http://localhost:3000/mj/image/${t.id}`);
  });

  it('FAILURE while two pollers run over one database: one refund, to user and token, with one type-6 row', async () => {
    const t = await submitted();
    mock.advance(t.id, 'banned prompt');
    const now = nowSec();
    const results = await Promise.all([
      pollMidjourney(a.ctx, now),
      pollMidjourney(b.ctx, now),
      pollMidjourney(a.ctx, now),
    ]);
    expect(results.reduce((n, r) => n + r.refunded, 0)).toBe(1);
    await pollMidjourney(b.ctx, now + 15);
    expect(await row(t.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'banned prompt', progress: '100%' });
    expect(await balances(t.user.id, t.token.id)).toEqual({ quota: 1_000_000, remain: 200_000, tokenUsed: 0 });
    const logs = await logsOf(a, t.user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), Number(l.token_id)])).toEqual([
      [2, 50_000, t.token.id],
      [6, 50_000, t.token.id],
    ]);
    expect(logs[1].otherJson).toEqual({ task_id: t.id, reason: '构图失败' });
  });

  it('the notify callback: signed, for a task of that channel, idempotent; a failure refunds once', async () => {
    const t = await submitted();
    const sig = mjNotifySignature(a.ctx.config.cryptoSecret, channelId);
    const notify = (query: string, body: unknown) =>
      fetch(`${a.url}/mj/notify?${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const task = { ...mock.tasks.get(t.id)!, status: 'IN_PROGRESS', progress: '40%' };
    expect((await notify(`channel=${channelId}&sig=${'0'.repeat(64)}`, task)).status).toBe(401);
    expect((await notify(`channel=${channelId + 1000}&sig=${sig}`, task)).status).toBe(401);
    expect((await notify(`channel=${channelId}&sig=${sig}`, { ...task, id: 'unknown-id' })).status).toBe(404);
    expect(await row(t.id)).toMatchObject({ status: '', progress: '0%' });
    expect((await notify(`channel=${channelId}&sig=${sig}`, task)).status).toBe(200);
    expect(await row(t.id)).toMatchObject({ status: 'IN_PROGRESS', progress: '40%' });
    // an older callback arriving late changes nothing
    await notify(`channel=${channelId}&sig=${sig}`, { ...task, progress: '10%' });
    expect((await row(t.id)).progress).toBe('40%');
    const failed = { ...task, status: 'FAILURE', failReason: 'upstream broke', progress: '' };
    const answers = await Promise.all([1, 2, 3].map(() => notify(`channel=${channelId}&sig=${sig}`, failed)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await row(t.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'upstream broke' });
    expect(await balances(t.user.id, t.token.id)).toEqual({ quota: 1_000_000, remain: 200_000, tokenUsed: 0 });
    expect((await logsOf(a, t.user.id)).filter((l) => l.type === 6)).toHaveLength(1);
  });

  it('the image route streams the stored image from a public address only', async () => {
    const t = await submitted();
    mock.advance(t.id);
    mock.advance(t.id);
    await pollMidjourney(a.ctx, nowSec());
    expect((await row(t.id)).image_url).toBe(`${mock.url}/image/${t.id}.png`);
    // the mock listens on 127.0.0.1: a private address, refused
    const refused = await fetch(`${a.url}/mj/image/${t.id}`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ description: 'forbidden_image_address ', type: 'upstream_error', code: 4 });
    const port = Number(new URL(mock.url).port);
    userUrlFetch(a.ctx).policy = {
      treatAsPublic: (addr, p) => addr === '127.0.0.1' && p === port,
      interfaces: () => ({}),
    };
    try {
      const ok = await fetch(`${a.url}/mj/image/${t.id}`);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await ok.arrayBuffer())).toEqual(MJ_MOCK_PNG);
    } finally {
      userUrlFetch(a.ctx).policy = {};
    }
    expect((await fetch(`${a.url}/mj/image/nope`)).status).toBe(400);
    // finished, so that the timeout below leaves it alone
    mock.advance(t.id);
    await pollMidjourney(a.ctx, nowSec());
  });

  it('unfinished an hour after its submit: FAILURE with the timeout reason, refunded once', async () => {
    const t = await submitted();
    const later = nowSec() + 3601;
    // the upstream still says it is working on it: the timeout wins
    mock.advance(t.id);
    const [r1, r2] = await Promise.all([pollMidjourney(a.ctx, later), pollMidjourney(b.ctx, later)]);
    expect(r1.refunded + r2.refunded).toBeGreaterThanOrEqual(1);
    await pollMidjourney(a.ctx, later + 15);
    expect(await row(t.id)).toMatchObject({ status: 'FAILURE', fail_reason: MJ_TIMEOUT_REASON, progress: '100%' });
    expect(await balances(t.user.id, t.token.id)).toEqual({ quota: 1_000_000, remain: 200_000, tokenUsed: 0 });
    expect((await logsOf(a, t.user.id)).map((l) => l.type)).toEqual([2, 6]);
  });
});
