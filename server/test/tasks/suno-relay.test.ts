// Suno's submit and fetch through the gateway against a strict mock: the charge (user AND token, to the unit) with
// its consume log row when the upstream accepts, nothing when it refuses or the request is wrong, the task row with
// its private data, and fetches answered from the caller's own tasks in Suno's envelope.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, logsOf } from '../relay/fixtures.js';
import { startSunoMock, type SunoMock } from './suno-mock.js';

const KEY = 'suno-channel-key';

await describeEachDb('suno relay', (kind) => {
  let tdb: TestDatabase;
  let s: TestServer;
  let mock: SunoMock;
  let channelId: number;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    s = await startTestServer({ database: tdb });
    mock = await startSunoMock(KEY);
    channelId = await addChannel(s, { type: 36, key: KEY, baseUrl: mock.url, models: ['suno_music', 'suno_lyrics'] });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await mock?.close();
    await tdb?.drop();
  });

  async function caller() {
    const user = await addUser(s, { quota: 1_000_000 });
    const token = await addToken(s, user.id, { remain: 200_000, unlimited: false, name: 'music' });
    return { user, token };
  }

  async function balances(userId: number, tokenId: number) {
    await flushLogs(s);
    const u = await s.ctx.db
      .selectFrom('users')
      .select(['quota', 'used_quota', 'request_count'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    const t = await s.ctx.db
      .selectFrom('tokens')
      .select(['remain_quota', 'used_quota'])
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    return {
      quota: Number(u.quota),
      used: Number(u.used_quota),
      count: Number(u.request_count),
      remain: Number(t.remain_quota),
      tokenUsed: Number(t.used_quota),
    };
  }

  const post = (path: string, key: string, body: unknown) =>
    fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('MUSIC: accepted upstream, charged 0.1 × 500000 to the user and the token with one consume row', async () => {
    const { user, token } = await caller();
    const calls = mock.calls.length;
    const res = await post('/suno/submit/music', token.key, { gpt_description_prompt: 'a song about cats' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { code: string; message: string; data: string };
    expect(body.code).toBe('success');
    expect(body.data).toMatch(/^task_[A-Za-z0-9]{32}$/);
    // the upstream got the channel's key and new-api's default model
    const sent = mock.calls.slice(calls);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      path: '/suno/submit/music',
      auth: `Bearer ${KEY}`,
      body: { gpt_description_prompt: 'a song about cats', mv: 'chirp-v3-0' },
    });
    expect(await balances(user.id, token.id)).toEqual({
      quota: 950_000,
      used: 50_000,
      count: 1,
      remain: 150_000,
      tokenUsed: 50_000,
    });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.token_id), Number(l.channel_id)])).toEqual([
      [2, 50_000, 'suno_music', token.id, channelId],
    ]);
    const row = await s.ctx.db
      .selectFrom('tasks')
      .selectAll()
      .where('task_id', '=', body.data)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ platform: 'suno', action: 'MUSIC', status: 'NOT_START', group: 'default' });
    expect(Number(row.quota)).toBe(50_000);
    expect(Number(row.user_id)).toBe(user.id);
    expect(Number(row.channel_id)).toBe(channelId);
    expect(JSON.parse(row.private_data)).toMatchObject({
      upstream_task_id: expect.stringMatching(/^up-\d+$/),
      token_id: token.id,
      token_name: 'music',
      model_name: 'suno_music',
    });

    // the fetch answers from the database, in the envelope, without private data
    const one = await fetch(`${s.url}/suno/fetch/${body.data}`, {
      headers: { authorization: `Bearer sk-${token.key}` },
    });
    expect(one.status).toBe(200);
    const oneBody = (await one.json()) as { code: string; data: Record<string, unknown> };
    expect(oneBody.code).toBe('success');
    expect(oneBody.data).toMatchObject({ task_id: body.data, action: 'MUSIC', status: 'NOT_START', progress: '0%' });
    expect(JSON.stringify(oneBody)).not.toContain('up-');
    expect(JSON.stringify(oneBody)).not.toContain('private');
    const many = await post('/suno/fetch', token.key, { ids: [body.data, 'task_nobody'] });
    const manyBody = (await many.json()) as { code: string; data: { task_id: string }[] };
    expect(manyBody.code).toBe('success');
    expect(manyBody.data.map((t) => t.task_id)).toEqual([body.data]);
    expect(mock.calls.length).toBe(calls + 1);

    // another user's token reads nothing of it
    const other = await caller();
    const theirs = await fetch(`${s.url}/suno/fetch/${body.data}`, {
      headers: { authorization: `Bearer sk-${other.token.key}` },
    });
    expect(theirs.status).toBe(404);
    expect(await theirs.json()).toMatchObject({ code: 'task_not_exist', data: null });
    const theirMany = (await (await post('/suno/fetch', other.token.key, { ids: [body.data] })).json()) as {
      data: unknown[];
    };
    expect(theirMany.data).toEqual([]);
  });

  it('LYRICS: charged 0.01 × 500000', async () => {
    const { user, token } = await caller();
    const res = await post('/suno/submit/LYRICS', token.key, { prompt: 'rain on the roof' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { code: string }).code).toBe('success');
    expect(mock.calls.at(-1)).toMatchObject({ path: '/suno/submit/lyrics', body: { prompt: 'rain on the roof' } });
    expect(await balances(user.id, token.id)).toEqual({
      quota: 995_000,
      used: 5_000,
      count: 1,
      remain: 195_000,
      tokenUsed: 5_000,
    });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name])).toEqual([[2, 5_000, 'suno_lyrics']]);
  });

  it('an upstream refusal charges nothing, writes no task and no log row', async () => {
    const { user, token } = await caller();
    mock.refuse = { status: 400, code: 'prompt_rejected', message: 'the prompt was refused' };
    try {
      const res = await post('/suno/submit/music', token.key, { prompt: 'x' });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ code: 'prompt_rejected', message: 'the prompt was refused', data: null });
    } finally {
      mock.refuse = null;
    }
    expect(await balances(user.id, token.id)).toEqual({
      quota: 1_000_000,
      used: 0,
      count: 0,
      remain: 200_000,
      tokenUsed: 0,
    });
    expect(await logsOf(s, user.id)).toEqual([]);
    const tasks = await s.ctx.db.selectFrom('tasks').select('id').where('user_id', '=', user.id).execute();
    expect(tasks).toEqual([]);
  });

  it('a bad action, a LYRICS without prompt, a body that is not JSON: a clear error, nothing sent, nothing charged', async () => {
    const { user, token } = await caller();
    const calls = mock.calls.length;
    const cases: [string, unknown, string][] = [
      ['/suno/submit/video', { prompt: 'x' }, 'invalid_action'],
      ['/suno/submit/lyrics', { title: 'no prompt' }, 'prompt_empty'],
      ['/suno/submit/music', '{not json', 'invalid_request'],
      ['/suno/submit/music', { mv: 3 }, 'invalid_request'],
    ];
    for (const [path, body, code] of cases) {
      const res = await post(path, token.key, body);
      expect(res.status).toBe(400);
      const answer = (await res.json()) as { code: string; message: string; data: unknown };
      expect(answer.code).toBe(code);
      expect(answer.message).not.toBe('');
      expect(answer.data).toBeNull();
    }
    expect(mock.calls.length).toBe(calls);
    expect(await balances(user.id, token.id)).toEqual({
      quota: 1_000_000,
      used: 0,
      count: 0,
      remain: 200_000,
      tokenUsed: 0,
    });
    expect(await logsOf(s, user.id)).toEqual([]);
  });

  it('a wrong token is refused in the envelope', async () => {
    const res = await post('/suno/submit/music', 'nope', { prompt: 'x' });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { code: string; message: string; data: unknown };
    expect(body.data).toBeNull();
    expect(body.message).not.toBe('');
  });
});
