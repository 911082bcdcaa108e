// MjNotifyEnabled and MjAccountFilterEnabled on: the upstream receives the gateway's own signed hook (never the
// client's) and the client's accountFilter; a mock that expects both accepts the submit, and the hook it was given is
// one the notify route accepts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MjProxyMock } from '../helpers/mj-proxy-mock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, setOptions } from '../relay/fixtures.js';

const SECRET = 'mj-options-secret';

describe('midjourney notify and account filter options', () => {
  let s: TestServer;
  let mock: MjProxyMock;
  beforeAll(async () => {
    s = await startTestServer();
    mock = await MjProxyMock.start({ secret: SECRET, expect: { notify: true, accountFilter: true } });
    await addChannel(s, { type: 2, key: SECRET, baseUrl: mock.url, models: ['mj_imagine'] });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await mock?.close();
  });

  it('sends the gateway hook and the account filter; the hook is accepted by the notify route', async () => {
    await setOptions(s, { MjNotifyEnabled: 'true', MjAccountFilterEnabled: 'true', ServerAddress: s.url });
    const user = await addUser(s, { quota: 1_000_000 });
    const token = await addToken(s, user.id, { remain: 500_000, unlimited: false });
    const res = await fetch(`${s.url}/mj/submit/imagine`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'hooked', notifyHook: 'http://client.example/hook', accountFilter: { id: 'a' } }),
    });
    const body = (await res.json()) as { code: number; result: string };
    expect(body.code).toBe(1);
    const sent = mock.requests.at(-1)!.body as { notifyHook: string; accountFilter: unknown };
    expect(sent.accountFilter).toEqual({ id: 'a' });
    expect(sent.notifyHook).toMatch(new RegExp(`^${s.url}/mj/notify\\?channel=\\d+&sig=[0-9a-f]{64}$`));
    expect(mock.violations).toEqual([]);
    // midjourney-proxy calls the hook with the task
    const task = { ...mock.tasks.get(body.result)!, status: 'IN_PROGRESS', progress: '30%' };
    const hook = await fetch(sent.notifyHook, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(task),
    });
    expect(hook.status).toBe(200);
    const row = await s.ctx.db
      .selectFrom('midjourneys')
      .select(['status', 'progress'])
      .where('mj_id', '=', body.result)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'IN_PROGRESS', progress: '30%' });
  });
});
