import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, startConsole } from '../channels/fixture.js';
import { setOption } from '../console/fixtures.js';
import { epaySign, epayVerify } from '../../src/services/epay.js';
import { referenceSign } from './epay-sign.js';

const KEY = 'merchant-secret-key';

describe('epay signature', () => {
  it('signs sorted non-empty params except sign/sign_type, with the key appended', () => {
    const params = { pid: '1001', type: 'alipay', money: '7.30', name: 'TUC1', empty: '', sign_type: 'MD5' };
    // md5("money=7.30&name=TUC1&pid=1001&type=alipay" + "k")
    expect(epaySign(params, 'k')).toBe(
      createHash('md5')
        .update('money=7.30&name=TUC1&pid=1001&type=alipay' + 'k')
        .digest('hex'),
    );
    const signed = { ...params, sign: epaySign(params, 'k') };
    expect(epayVerify(signed, 'k')).toBe(true);
    expect(epayVerify({ ...signed, money: '0.01' }, 'k')).toBe(false);
    expect(epayVerify(signed, 'other')).toBe(false);
    expect(epayVerify({ ...signed, sign: 'zz' }, 'k')).toBe(false);
  });
});

await describeEachDb('online top-up (EPay)', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let alice: { client: ConsoleClient; id: number; username: string };
  let vip: { client: ConsoleClient; id: number; username: string };

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    alice = await addUser(server);
    vip = await addUser(server, { group: 'vip' });
  });
  afterAll(async () => {
    await server?.close();
  });

  const quotaOf = async (id: number) =>
    Number(
      (await server.ctx.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota,
    );
  const order = (tradeNo: string) =>
    server.ctx.db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirstOrThrow();
  const orderCount = async () =>
    Number(
      (
        await server.ctx.db
          .selectFrom('top_ups')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const topupLogs = (userId: number) =>
    server.ctx.logDb
      .selectFrom('logs')
      .select(['content', 'type'])
      .where('user_id', '=', userId)
      .where('type', '=', 1)
      .execute();

  async function notify(params: Record<string, string>, via: 'GET' | 'POST' = 'GET') {
    const qs = new URLSearchParams(params).toString();
    const res =
      via === 'GET'
        ? await fetch(`${server.url}/api/user/epay/notify?${qs}`)
        : await fetch(`${server.url}/api/user/epay/notify`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: qs,
          });
    return { status: res.status, text: await res.text() };
  }

  function gatewayNotify(
    tradeNo: string,
    money: string,
    overrides: Record<string, string> = {},
  ): Record<string, string> {
    const params: Record<string, string> = {
      pid: '1001',
      trade_no: `2025${Math.floor(Math.random() * 1e9)}`,
      out_trade_no: tradeNo,
      type: 'alipay',
      name: 'TUC10',
      money,
      trade_status: 'TRADE_SUCCESS',
      ...overrides,
    };
    return { ...params, sign: referenceSign(params, KEY), sign_type: 'MD5' };
  }

  it('refuses to start a payment until PayAddress, EpayId and EpayKey are set', async () => {
    expect((await alice.client.post('/api/user/pay', { amount: 10, payment_method: 'zfb' })).body).toEqual({
      message: 'error',
      data: '管理员未开启在线充值！',
    });
    expect(await orderCount()).toBe(0);
    expect(await notify(gatewayNotify('USR1NOabcdef1', '1.00'))).toEqual({ status: 200, text: 'fail' });

    await setOption(root, 'ServerAddress', 'https://gw.example.com/');
    await setOption(root, 'PayAddress', 'https://pay.example.com/');
    await setOption(root, 'EpayId', '1001');
    await setOption(root, 'EpayKey', KEY);
    await setOption(root, 'Price', '7.3');
    await setOption(root, 'MinTopUp', '2');
    await setOption(root, 'TopupGroupRatio', JSON.stringify({ default: 1, vip: 0.5, zero: 0 }));
    expect((await root.get('/api/status')).body.data).toMatchObject({ enable_online_topup: true, min_topup: 2 });
  });

  it('quotes the price per group, with the minimum and integer checks', async () => {
    expect((await alice.client.post('/api/user/amount', { amount: 1, top_up_code: '' })).body).toEqual({
      message: 'error',
      data: '充值数量不能小于 2',
    });
    expect((await alice.client.post('/api/user/amount', { amount: 1.5 })).body).toEqual({
      message: 'error',
      data: '参数错误',
    });
    expect((await alice.client.post('/api/user/amount', {})).body).toEqual({ message: 'error', data: '参数错误' });
    expect((await alice.client.post('/api/user/amount', { amount: 10, top_up_code: '' })).body).toEqual({
      message: 'success',
      data: '73.00',
    });
    expect((await alice.client.post('/api/user/amount', { amount: '3' })).body).toEqual({
      message: 'success',
      data: '21.90',
    });
    expect((await vip.client.post('/api/user/amount', { amount: 10 })).body).toEqual({
      message: 'success',
      data: '36.50',
    });
    const zero = await addUser(server, { group: 'zero' }); // a ratio of 0 counts as 1
    expect((await zero.client.post('/api/user/amount', { amount: 10 })).body).toEqual({
      message: 'success',
      data: '73.00',
    });
    expect(
      (
        await new (alice.client.constructor as typeof ConsoleClient)(server.url).post('/api/user/amount', {
          amount: 10,
        })
      ).status,
    ).toBe(401);
  });

  it('creates a pending order and answers the signed gateway form', async () => {
    const res = await alice.client.post('/api/user/pay', { amount: 10, top_up_code: '', payment_method: 'zfb' });
    expect(res.body.message).toBe('success');
    expect(res.body.url).toBe('https://pay.example.com/submit.php');
    const form = res.body.data as Record<string, string>;
    expect(form.out_trade_no).toMatch(new RegExp(`^USR${alice.id}NO[0-9a-zA-Z]{6}\\d{10}$`));
    expect(form).toEqual({
      pid: '1001',
      type: 'alipay',
      out_trade_no: form.out_trade_no,
      notify_url: 'https://gw.example.com/api/user/epay/notify',
      return_url: 'https://gw.example.com/log',
      name: 'TUC10',
      money: '73.00',
      device: 'pc',
      sign: referenceSign(form, KEY),
      sign_type: 'MD5',
    });
    const row = await order(form.out_trade_no);
    expect(row).toMatchObject({ user_id: alice.id, amount: 10, status: 'pending' });
    expect(Number(row.money)).toBeCloseTo(73, 6);
    expect(Math.abs(Number(row.create_time) - Date.now() / 1000)).toBeLessThan(60);

    await setOption(root, 'CustomCallbackAddress', 'https://cb.example.com');
    const wx = await vip.client.post('/api/user/pay', { amount: 4, payment_method: 'wx' });
    expect(wx.body.data).toMatchObject({
      type: 'wxpay',
      money: '14.60',
      name: 'TUC4',
      notify_url: 'https://cb.example.com/api/user/epay/notify',
    });
    expect((await vip.client.post('/api/user/pay', { amount: 4, payment_method: 'other' })).body.data.type).toBe(
      'wxpay',
    );
    await setOption(root, 'CustomCallbackAddress', '');

    const before = await orderCount();
    expect((await alice.client.post('/api/user/pay', { amount: 1, payment_method: 'zfb' })).body).toEqual({
      message: 'error',
      data: '充值数量不能小于 2',
    });
    expect(await orderCount()).toBe(before);
  });

  it('rejects a notify with a wrong signature or money and changes nothing', async () => {
    const { body } = await alice.client.post('/api/user/pay', { amount: 2, payment_method: 'zfb' });
    const tradeNo = body.data.out_trade_no as string;
    const quota = await quotaOf(alice.id);
    const good = gatewayNotify(tradeNo, '14.60');
    expect(await notify({ ...good, sign: referenceSign(good, 'wrong-key') })).toEqual({ status: 200, text: 'fail' });
    expect(await notify({ ...good, money: '99.00' })).toEqual({ status: 200, text: 'fail' }); // signature no longer matches
    expect(await notify(gatewayNotify(tradeNo, '0.01'))).toEqual({ status: 200, text: 'fail' }); // signed, but less than the order
    expect(await notify(gatewayNotify('USR1NOnosuch1700000000', '14.60'))).toEqual({ status: 200, text: 'fail' });
    const { sign: _s, ...unsigned } = good;
    expect(await notify(unsigned)).toEqual({ status: 200, text: 'fail' });
    expect((await order(tradeNo)).status).toBe('pending');
    expect(await quotaOf(alice.id)).toBe(quota);
    // a signed notice of a non-final state is acknowledged without crediting
    expect(await notify(gatewayNotify(tradeNo, '14.60', { trade_status: 'WAIT_BUYER_PAY' }))).toEqual({
      status: 200,
      text: 'success',
    });
    expect((await order(tradeNo)).status).toBe('pending');
    expect(await quotaOf(alice.id)).toBe(quota);
  });

  it('credits a paid order exactly once when the notify arrives 5 times concurrently', async () => {
    const { body } = await alice.client.post('/api/user/pay', { amount: 3, payment_method: 'zfb' });
    const tradeNo = body.data.out_trade_no as string;
    const quota = await quotaOf(alice.id);
    const logsBefore = (await topupLogs(alice.id)).length;
    const params = gatewayNotify(tradeNo, '21.90');
    const answers = await Promise.all(Array.from({ length: 5 }, () => notify(params)));
    expect(answers).toEqual(Array.from({ length: 5 }, () => ({ status: 200, text: 'success' })));
    expect(await quotaOf(alice.id)).toBe(quota + 3 * 500000);
    expect((await order(tradeNo)).status).toBe('success');
    const logs = await topupLogs(alice.id);
    expect(logs.length).toBe(logsBefore + 1);
    expect(logs.at(-1)!.content).toBe('使用在线充值成功，充值金额: ＄3.000000 额度，支付金额：21.900000');
    // a late repeat (POST form this time) is acknowledged and still credits nothing
    expect(await notify(params, 'POST')).toEqual({ status: 200, text: 'success' });
    expect(await quotaOf(alice.id)).toBe(quota + 3 * 500000);
  });

  it('accepts the notify as a POST form', async () => {
    const { body } = await vip.client.post('/api/user/pay', { amount: 2, payment_method: 'wx' });
    const quota = await quotaOf(vip.id);
    expect(await notify(gatewayNotify(body.data.out_trade_no, '7.30', { type: 'wxpay' }), 'POST')).toEqual({
      status: 200,
      text: 'success',
    });
    expect(await quotaOf(vip.id)).toBe(quota + 2 * 500000);
  });

  it('takes amounts in quota points when currency display is off, refusing fractions of a unit', async () => {
    await setOption(root, 'DisplayInCurrencyEnabled', 'false');
    try {
      expect((await alice.client.post('/api/user/amount', { amount: 999999 })).body).toEqual({
        message: 'error',
        data: '充值数量不能小于 1000000',
      });
      // new-api credited floor(1.5) = 1 unit for this; refuse it instead
      expect((await alice.client.post('/api/user/pay', { amount: 1250000, payment_method: 'zfb' })).body).toEqual({
        message: 'error',
        data: '充值数量必须是 500000 的整数倍',
      });
      expect((await alice.client.post('/api/user/amount', { amount: 1500000 })).body).toEqual({
        message: 'success',
        data: '21.90',
      });
      const { body } = await alice.client.post('/api/user/pay', { amount: 1500000, payment_method: 'zfb' });
      expect(body.data).toMatchObject({ money: '21.90', name: 'TUC1500000' });
      expect((await order(body.data.out_trade_no)).amount).toBe(3);
      const quota = await quotaOf(alice.id);
      expect(await notify(gatewayNotify(body.data.out_trade_no, '21.90'))).toEqual({ status: 200, text: 'success' });
      expect(await quotaOf(alice.id)).toBe(quota + 1500000);
    } finally {
      await setOption(root, 'DisplayInCurrencyEnabled', 'true');
    }
  });
});
