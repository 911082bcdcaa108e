// Updating every enabled channel's balance reports which channels failed and why (issue 34), instead of a blanket
// success; the channels that did answer are still updated, and disabled channels are not probed.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addUser, channelsChanged } from './fixtures.js';

await describeEachDb('update all channel balances', (kind) => {
  let s: TestServer;
  let up: MockUpstream;
  let adminHeaders: Record<string, string>;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    up = await MockUpstream.start();
    const admin = await addUser(s, { role: 100, username: 'balance-root' });
    await s.ctx.db.updateTable('users').set({ access_token: 'balance-admin' }).where('id', '=', admin.id).execute();
    adminHeaders = { authorization: 'balance-admin', 'new-api-user': String(admin.id) };
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  it('answers success with the updated count and each failed channel with its reason', async () => {
    // DeepSeek's balance API: the good key answers, the bad one gets a 401
    up.behave = (req) =>
      req.path === '/user/balance' && req.headers.authorization === 'Bearer k-good'
        ? { kind: 'json', body: { balance_infos: [{ currency: 'CNY', total_balance: '12.50' }] } }
        : { kind: 'json', status: 401, body: { error: { message: 'bad key' } } };
    const good = await addChannel(s, { type: 43, baseUrl: up.url, models: ['m'], key: 'k-good', name: 'good' });
    const refused = await addChannel(s, { type: 43, baseUrl: up.url, models: ['m'], key: 'k-bad', name: 'refused' });
    // a type without a balance API
    const unsupported = await addChannel(s, { type: 14, baseUrl: up.url, models: ['m'], name: 'claude' });
    // disabled: skipped, not reported
    const off = await addChannel(s, { type: 43, baseUrl: up.url, models: ['m'], key: 'k-bad', name: 'off' });
    await s.ctx.db.updateTable('channels').set({ status: 2 }).where('id', '=', off).execute();
    await channelsChanged(s);

    const res = await fetch(`${s.url}/api/channel/update_balance`, { headers: adminHeaders });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      success: boolean;
      data: { updated: number; failed: { id: number; name: string; message: string }[] };
    };
    expect(body.success).toBe(true);
    expect(body.data.updated).toBe(1);
    expect(body.data.failed).toEqual([
      { id: refused, name: 'refused', message: 'status code: 401' },
      { id: unsupported, name: 'claude', message: '尚未实现' },
    ]);

    const rows = await s.ctx.db
      .selectFrom('channels')
      .select(['id', 'status', 'balance'])
      .where('id', 'in', [good, refused, unsupported, off])
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.id, r.status, Number(r.balance)])).toEqual([
      [good, 1, 12.5],
      [refused, 1, 0],
      [unsupported, 1, 0],
      [off, 2, 0],
    ]);
  });

  it('is admin only and changes nothing for a normal user', async () => {
    const probesBefore = up.requests.length;
    const user = await addUser(s, { role: 1, username: 'balance-user' });
    await s.ctx.db.updateTable('users').set({ access_token: 'balance-user-token' }).where('id', '=', user.id).execute();
    const res = await fetch(`${s.url}/api/channel/update_balance`, {
      headers: { authorization: 'balance-user-token', 'new-api-user': String(user.id) },
    });
    expect(await res.json()).toMatchObject({ success: false });
    expect(up.requests.length).toBe(probesBefore);
  });
});
