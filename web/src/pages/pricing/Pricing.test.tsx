import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import type { Status } from '../../context/status.js';
import { renderWithApp } from '../../test/harness.js';
import Pricing from './index.js';

const PRICING = {
  success: true,
  message: '',
  data: [
    {
      model_name: 'claude-3-haiku',
      quota_type: 0,
      model_ratio: 0.125,
      model_price: 0,
      owner_by: '',
      completion_ratio: 5,
      enable_groups: ['default'],
    },
    {
      model_name: 'mj_imagine',
      quota_type: 1,
      model_ratio: 0,
      model_price: 0.1,
      owner_by: '',
      completion_ratio: 0,
      enable_groups: ['default', 'vip'],
    },
    {
      model_name: 'sora-2',
      quota_type: 1,
      model_ratio: 0,
      model_price: 0.15,
      owner_by: '',
      completion_ratio: 0,
      enable_groups: ['default', 'vip'],
      billing_unit: 'second',
    },
    {
      model_name: 'gpt-4o-mini',
      quota_type: 0,
      model_ratio: 0.075,
      model_price: 0,
      owner_by: '',
      completion_ratio: 4,
      enable_groups: ['default', 'vip'],
    },
  ],
  group_ratio: { default: 1, vip: 2 },
  usable_group: { default: '默认分组', vip: 'vip分组' },
};

let writes: string[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  writes = [];
  vi.stubGlobal('fetch', (url: string) =>
    Promise.resolve(
      new Response(JSON.stringify(url.startsWith('/api/pricing') ? PRICING : { success: true, data: {} }), {
        status: 200,
      }),
    ),
  );
  Object.defineProperty(navigator, 'clipboard', {
    configurable: true,
    value: { writeText: (text: string) => (writes.push(text), Promise.resolve()) },
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

function renderPricing(status: Status = { setup: true, display_in_currency: true, quota_per_unit: 500000 }) {
  return renderWithApp([{ path: '*', element: <Pricing /> }], '/pricing', status).view;
}

const modelOrder = () => Array.from(document.querySelectorAll('[data-testid^="model-"]')).map((e) => e.textContent);
const priceText = (model: string) => screen.getByTestId(`price-${model}`).textContent;

describe('pricing page', () => {
  it('shows the guest banner, gpt first, and prices for the default group', async () => {
    renderPricing();
    await screen.findByTestId('model-gpt-4o-mini');
    expect(screen.getByTestId('pricing-guest-banner').textContent).toContain('您还未登陆，显示的价格为默认分组倍率: 1');
    expect(screen.getByTestId('pricing-formula').textContent).toContain('按量计费费用 = 分组倍率 × 模型倍率');
    expect(modelOrder()).toEqual(['gpt-4o-mini', 'claude-3-haiku', 'mj_imagine', 'sora-2']);
    expect(priceText('gpt-4o-mini')).toBe('提示 $0.15 / 1M tokens补全 $0.6 / 1M tokens');
    expect(priceText('mj_imagine')).toBe('模型价格：$0.1');
    expect(screen.getByTestId('ratio-mj_imagine').textContent).toBe('模型倍率：无补全倍率：无分组倍率：1');
    expect(screen.getByTestId('ratio-gpt-4o-mini').textContent).toBe('模型倍率：0.075补全倍率：4分组倍率：1');
    expect(screen.getByTestId('available-claude-3-haiku')).toBeTruthy();
  });

  it('labels per-second video models and per-call models, priced with the group ratio (issue 45)', async () => {
    renderPricing();
    await screen.findByTestId('model-sora-2');
    const typeOf = (m: string) => screen.getByTestId(`billing-${m}`).textContent;
    expect(typeOf('sora-2')).toBe('按秒计费');
    expect(typeOf('mj_imagine')).toBe('按次计费');
    expect(typeOf('gpt-4o-mini')).toBe('按量计费');
    expect(priceText('sora-2')).toBe('模型价格：$0.15 / 秒');
    expect(priceText('mj_imagine')).toBe('模型价格：$0.1');
    fireEvent.click(screen.getByTestId('group-sora-2-vip'));
    await screen.findByText('当前查看的分组为：vip，倍率为：2');
    expect(priceText('sora-2')).toBe('模型价格：$0.3 / 秒');

    cleanup();
    await i18n.changeLanguage('en');
    renderPricing({ setup: true, display_in_currency: false, quota_per_unit: 500000 });
    await screen.findByTestId('model-sora-2');
    expect(typeOf('sora-2')).toBe('Pay per second');
    expect(typeOf('mj_imagine')).toBe('Pay per call');
    expect(priceText('sora-2')).toBe('Price per second: 75000 quota');
    expect(priceText('mj_imagine')).toBe('Price per call: 50000 quota');
  });

  it('writes labels with an ASCII colon and keeps 0.075 whole in English (issue 46, point 13)', async () => {
    await i18n.changeLanguage('en');
    renderPricing();
    await screen.findByTestId('model-gpt-4o-mini');
    expect(screen.getByTestId('ratio-gpt-4o-mini').textContent).toBe(
      'Model ratio: 0.075Completion ratio: 4Group ratio: 1',
    );
  });

  it('switches the viewed group from a group tag and reprices every row', async () => {
    renderPricing();
    await screen.findByTestId('model-gpt-4o-mini');
    fireEvent.click(screen.getByTestId('group-gpt-4o-mini-vip'));
    expect(await screen.findByText('当前查看的分组为：vip，倍率为：2')).toBeTruthy();
    expect(priceText('gpt-4o-mini')).toBe('提示 $0.3 / 1M tokens补全 $1.2 / 1M tokens');
    expect(priceText('mj_imagine')).toBe('模型价格：$0.2');
    // claude-3-haiku is not offered to vip: no availability check, no vip tag.
    expect(screen.queryByTestId('available-claude-3-haiku')).toBeNull();
    expect(screen.getByTestId('available-gpt-4o-mini')).toBeTruthy();
    expect(screen.queryByTestId('group-claude-3-haiku-vip')).toBeNull();
    expect(screen.getByTestId('pricing-current-group').textContent).toContain('vip: 2');
  });

  it('shows the user banner and views the user group for a logged-in user', async () => {
    localStorage.setItem(
      'user',
      JSON.stringify({ id: 5, username: 'u', display_name: 'u', role: 1, status: 1, group: 'vip' }),
    );
    renderPricing();
    await screen.findByTestId('model-gpt-4o-mini');
    expect(screen.getByTestId('pricing-user-banner').textContent).toContain('您的默认分组为：vip，分组倍率为：2');
    expect(priceText('gpt-4o-mini')).toBe('提示 $0.3 / 1M tokens补全 $1.2 / 1M tokens');
  });

  it('shows quota units when currency display is off', async () => {
    renderPricing({ setup: true, display_in_currency: false, quota_per_unit: 500000 });
    await screen.findByTestId('model-gpt-4o-mini');
    expect(priceText('gpt-4o-mini')).toBe('提示 75000 额度 / 1M tokens补全 300000 额度 / 1M tokens');
  });

  it('filters by name and ignores IME composition until it ends', async () => {
    renderPricing();
    await screen.findByTestId('model-gpt-4o-mini');
    const input = screen.getByTestId('pricing-search') as HTMLInputElement;
    fireEvent.change(input, { target: { value: 'HAIKU' } });
    expect(modelOrder()).toEqual(['claude-3-haiku']);
    fireEvent.change(input, { target: { value: '' } });
    expect(modelOrder()).toHaveLength(4);

    fireEvent.compositionStart(input);
    fireEvent.change(input, { target: { value: 'gpt m' } });
    fireEvent.change(input, { target: { value: 'gpt mi' } });
    expect(modelOrder()).toHaveLength(4);
    fireEvent.compositionEnd(input, { target: { value: 'gpt mi' } });
    expect(modelOrder()).toEqual(['gpt-4o-mini']);
  });

  it('copies a clicked model name and the selected models', async () => {
    renderPricing();
    await screen.findByTestId('model-gpt-4o-mini');
    const copyBtn = screen.getByTestId('pricing-copy-selected') as HTMLButtonElement;
    expect(copyBtn.disabled).toBe(true);
    await act(async () => {
      fireEvent.click(screen.getByTestId('model-claude-3-haiku'));
    });
    expect(writes).toEqual(['claude-3-haiku']);
    expect(await screen.findByText('已复制：claude-3-haiku')).toBeTruthy();

    const rowOf = (m: string) => screen.getByTestId(`model-${m}`).closest('tr')!;
    fireEvent.click(within(rowOf('gpt-4o-mini')).getByRole('checkbox'));
    fireEvent.click(within(rowOf('mj_imagine')).getByRole('checkbox'));
    expect(copyBtn.disabled).toBe(false);
    await act(async () => {
      fireEvent.click(copyBtn);
    });
    expect(writes[1]).toBe('gpt-4o-mini,mj_imagine');
  });

  it('shows the server message when the price list fails', async () => {
    vi.stubGlobal('fetch', () =>
      Promise.resolve(new Response(JSON.stringify({ success: false, message: '价格加载失败了' }), { status: 200 })),
    );
    renderPricing();
    expect(await screen.findByText('价格加载失败了')).toBeTruthy();
  });
});
