// The wallet's top-up history: a user reads their own orders (time, trade number, method, amount, money, state); an
// admin switches to every order and completes a pending one after confirming, the list then reading anew.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import { timestamp2string } from '../../lib/render.js';
import TopUpPage from './index.js';
import type { TopUpOrder } from './TopUpHistory.js';

const USER = { id: 7, username: 'alice', display_name: 'alice', role: 1, status: 1, group: 'default' };
const CREATED = 1765000000;

const order = (o: Partial<TopUpOrder>): TopUpOrder => ({
  id: 1,
  user_id: 7,
  amount: 10,
  money: 73,
  trade_no: 'USR7NOabcdef1765000000',
  payment_method: 'alipay',
  create_time: CREATED,
  status: 'pending',
  ...o,
});

const MINE = [
  // a Creem order's amount is the product's quota
  order({ id: 4, trade_no: 'ref_creem4', payment_method: 'creem', amount: 1_000_000, money: 9.5, status: 'success' }),
  order({ id: 2, trade_no: 'ref_stripe2', payment_method: 'stripe', amount: 3, money: 24, status: 'success' }),
  order({ id: 1 }),
];
const BOBS = order({ id: 3, user_id: 8, trade_no: 'USR8NOzzzzzz1765000001', payment_method: 'wxpay', money: 36.5 });

const pageOf = (items: TopUpOrder[]) => ({ items, total: items.length, page: 1, page_size: 10 });

let calls: Call[];
let completed: string[];

function serve(complete: unknown = { success: true, message: '' }) {
  completed = [];
  calls = recordFetch(({ path, body }) => {
    if (path === '/api/user/self') return { quota: 100 };
    if (path === '/api/user/checkin') return new Response(JSON.stringify({ success: false, message: '' }));
    if (path === '/api/user/topup/self') return pageOf(MINE);
    if (path === '/api/user/topup') {
      const done = (o: TopUpOrder) => (completed.includes(o.trade_no) ? { ...o, status: 'success' } : o);
      return pageOf([done(BOBS), ...MINE.map(done)]);
    }
    if (path === '/api/user/topup/complete') {
      completed.push((body as { trade_no: string }).trade_no);
      return new Response(JSON.stringify(complete));
    }
    return null;
  });
}

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const render = () => renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', { setup: true });
const rowOf = async (tradeNo: string) => (await screen.findByText(tradeNo)).closest('tr') as HTMLElement;

describe('top-up history on the wallet', () => {
  it("shows the user's own orders with time, method, amount, money and state, and no admin action", async () => {
    localStorage.setItem('user', JSON.stringify(USER));
    serve();
    render();
    const stripe = await rowOf('ref_stripe2');
    expect(within(stripe).getByText(timestamp2string(CREATED))).toBeTruthy();
    expect(within(stripe).getByText('Stripe')).toBeTruthy();
    expect(within(stripe).getByText('24.00')).toBeTruthy();
    expect(within(stripe).getByText('$3.00')).toBeTruthy();
    expect(within(stripe).getByText('成功')).toBeTruthy();
    const creem = await rowOf('ref_creem4');
    expect(within(creem).getByText('Creem')).toBeTruthy();
    expect(within(creem).getByText('$2.00')).toBeTruthy();
    const epay = await rowOf('USR7NOabcdef1765000000');
    expect(within(epay).getByText('支付宝')).toBeTruthy();
    // 10 units at 500 000 quota a unit, shown as the balance is
    expect(within(epay).getByText('$10.00')).toBeTruthy();
    expect(within(epay).getByText('73.00')).toBeTruthy();
    expect(within(epay).getByText('待支付')).toBeTruthy();
    expect(within(epay).queryByRole('button', { name: /补\s*单/ })).toBeNull();
    expect(screen.queryByTestId('history-scope')).toBeNull();
    expect(calls.some((c) => c.url.startsWith('/api/user/topup?'))).toBe(false);
    expect(calls.find((c) => c.url.startsWith('/api/user/topup/self'))?.url).toBe(
      '/api/user/topup/self?p=1&page_size=10',
    );
  });

  it('searches by trade number', async () => {
    localStorage.setItem('user', JSON.stringify(USER));
    serve();
    render();
    await rowOf('ref_stripe2');
    const box = screen.getByTestId('history-search').querySelector('input') ?? screen.getByTestId('history-search');
    fireEvent.change(box, { target: { value: ' stripe2 ' } });
    fireEvent.keyDown(box, { key: 'Enter', code: 'Enter', keyCode: 13 });
    await waitFor(() =>
      expect(calls.map((c) => c.url)).toContain('/api/user/topup/self?p=1&page_size=10&keyword=stripe2'),
    );
  });

  it('lets an admin see every order and complete a pending one after confirming', async () => {
    localStorage.setItem('user', JSON.stringify({ ...USER, role: 10 }));
    serve();
    render();
    await rowOf('ref_stripe2');
    fireEvent.click(within(screen.getByTestId('history-scope')).getByText('全部订单'));
    const bobs = await rowOf(BOBS.trade_no);
    expect(within(bobs).getByText('微信')).toBeTruthy();
    expect(within(bobs).getByText('8')).toBeTruthy();
    // a paid order offers no completion
    await rowOf('ref_stripe2');
    expect(screen.queryByTestId('complete-ref_stripe2')).toBeNull();

    fireEvent.click(within(bobs).getByRole('button', { name: /补\s*单/ }));
    expect(await screen.findByText(/将订单 USR8NOzzzzzz1765000001 标记为已支付，并为用户 8 充值/)).toBeTruthy();
    expect(completed).toEqual([]);
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /确\s*定/ }));
    });
    await waitFor(() => expect(completed).toEqual([BOBS.trade_no]));
    expect(calls.filter((c) => c.url === '/api/user/topup/complete')).toEqual([
      { method: 'POST', url: '/api/user/topup/complete', body: { trade_no: BOBS.trade_no } },
    ]);
    expect(await screen.findByText('补单成功')).toBeTruthy();
    // the list is read again and shows the order paid, without its button
    await waitFor(() => expect(screen.queryByTestId(`complete-${BOBS.trade_no}`)).toBeNull());
    expect(within(await rowOf(BOBS.trade_no)).getByText('成功')).toBeTruthy();
  });

  it("shows the server's refusal of a completion", async () => {
    await i18n.changeLanguage('en');
    localStorage.setItem('user', JSON.stringify({ ...USER, role: 10 }));
    serve({ success: false, message: '订单状态不是待支付，无法补单' });
    render();
    await rowOf('ref_stripe2');
    fireEvent.click(within(screen.getByTestId('history-scope')).getByText('All orders'));
    fireEvent.click(await screen.findByTestId(`complete-${BOBS.trade_no}`));
    await act(async () => {
      fireEvent.click(await screen.findByRole('button', { name: 'OK' }));
    });
    expect(await screen.findByText('The order is not pending, so it cannot be completed')).toBeTruthy();
  });
});
