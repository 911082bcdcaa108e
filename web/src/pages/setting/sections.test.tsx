// Section behaviour in the DOM: nothing-changed notice, invalid input blocks the save, one PUT per changed key with
// the server's message and the partial-failure notice, and the password-login confirmation.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { App } from 'antd';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import i18n from '../../i18n/index.js';
import { StatusProvider } from '../../context/status.js';
import OptionSection from './OptionSection.js';
import LoginToggles from './system/LoginToggles.js';
import RateLimitTab from './RateLimitTab.js';
import { GROUP_FIELDS, QUOTA_FIELDS, RATE_LIMIT_FIELDS } from './fields.js';
import type { Options } from './logic.js';

const puts: Array<{ key: string; value: string }> = [];
let putReply: (body: { key: string; value: string }) => { success: boolean; message: string };

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  puts.length = 0;
  putReply = () => ({ success: true, message: '' });
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      if (init?.method === 'PUT' && url === '/api/option/') {
        const body = JSON.parse(String(init.body)) as { key: string; value: string };
        puts.push(body);
        return new Response(JSON.stringify(putReply(body)), { status: 200 });
      }
      if (url.startsWith('/api/option/')) return new Response(JSON.stringify({ success: true, message: '', data: [] }));
      return new Response(JSON.stringify({ success: true, message: '', data: { setup: true } }));
    }),
  );
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function renderWith(node: React.ReactNode) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={qc}>
      <StatusProvider initial={{ setup: true }}>
        <App>{node}</App>
      </StatusProvider>
    </QueryClientProvider>,
  );
}

const rateOptions: Options = {
  ModelRequestRateLimitEnabled: 'false',
  ModelRequestRateLimitDurationMinutes: '1',
  ModelRequestRateLimitCount: '0',
  ModelRequestRateLimitSuccessCount: '1000',
};

describe('option section', () => {
  it('says nothing changed and sends nothing', async () => {
    renderWith(<OptionSection id="rl" title="速率" fields={RATE_LIMIT_FIELDS} options={rateOptions} />);
    fireEvent.click(screen.getByTestId('save-rl'));
    expect(await screen.findByText('你似乎并没有修改什么')).toBeTruthy();
    expect(puts).toEqual([]);
  });

  it('blocks invalid JSON with 请检查输入 and the field message', async () => {
    const options = {
      GroupRatio: '{"default":1}',
      UserUsableGroups: '{"default":"默认分组"}',
      TopupGroupRatio: '{"default":1}',
    };
    const { container } = renderWith(<OptionSection id="g" title="分组" fields={GROUP_FIELDS} options={options} />);
    const area = container.querySelector('textarea#GroupRatio') as HTMLTextAreaElement;
    fireEvent.change(area, { target: { value: '{"default": ' } });
    fireEvent.click(screen.getByTestId('save-g'));
    expect(await screen.findByText('请检查输入')).toBeTruthy();
    expect(await screen.findByText('不是合法的 JSON 字符串')).toBeTruthy();
    expect(puts).toEqual([]);
  });

  it('sends one PUT per changed key and reports a partial failure with the server message', async () => {
    putReply = (b) =>
      b.key === 'ModelRequestRateLimitCount'
        ? { success: false, message: 'ModelRequestRateLimitCount 的值必须是数字' }
        : { success: true, message: '' };
    const { container } = renderWith(
      <OptionSection id="rl" title="速率" fields={RATE_LIMIT_FIELDS} options={rateOptions} />,
    );
    fireEvent.change(container.querySelector('input#ModelRequestRateLimitCount')!, { target: { value: '30' } });
    fireEvent.change(container.querySelector('input#ModelRequestRateLimitSuccessCount')!, { target: { value: '50' } });
    fireEvent.click(screen.getByTestId('save-rl'));
    expect(await screen.findByText('部分保存失败，请重试')).toBeTruthy();
    expect(await screen.findByText('ModelRequestRateLimitCount 的值必须是数字')).toBeTruthy();
    expect(puts).toEqual([
      { key: 'ModelRequestRateLimitCount', value: '30' },
      { key: 'ModelRequestRateLimitSuccessCount', value: '50' },
    ]);
  });

  it('enforces the minimum of the success count (min 1)', async () => {
    const { container } = renderWith(
      <OptionSection id="rl" title="速率" fields={RATE_LIMIT_FIELDS} options={rateOptions} />,
    );
    const input = container.querySelector('input#ModelRequestRateLimitSuccessCount') as HTMLInputElement;
    fireEvent.change(input, { target: { value: '0' } });
    fireEvent.blur(input);
    fireEvent.click(screen.getByTestId('save-rl'));
    // InputNumber clamps to its minimum on blur, so the saved value is 1, never 0.
    await waitFor(() => expect(puts).toEqual([{ key: 'ModelRequestRateLimitSuccessCount', value: '1' }]));
  });
});

describe('rate-limit tab: usage limits', () => {
  const options: Options = { ...rateOptions, UsageLimitTimeZone: '', UsageLimitGroupDefaults: '{}' };

  it('saves the site time zone, trimmed, from its own section', async () => {
    const { container } = renderWith(<RateLimitTab options={options} />);
    // the title shows on the section's card (and again in the tab's contents)
    expect(within(screen.getByTestId('section-usagelimits')).getByText('令牌与用户用量限制')).toBeTruthy();
    fireEvent.change(container.querySelector('input#UsageLimitTimeZone')!, { target: { value: ' Asia/Shanghai ' } });
    fireEvent.click(screen.getByTestId('save-usagelimits'));
    await waitFor(() => expect(puts).toEqual([{ key: 'UsageLimitTimeZone', value: 'Asia/Shanghai' }]));
  });

  it('shows the server’s refusal of an unknown zone', async () => {
    const refusal = 'Mars/Olympus 不是有效的时区名称（IANA 格式，如 Asia/Shanghai）';
    putReply = () => ({ success: false, message: refusal });
    const { container } = renderWith(<RateLimitTab options={options} />);
    fireEvent.change(container.querySelector('input#UsageLimitTimeZone')!, { target: { value: 'Mars/Olympus' } });
    fireEvent.click(screen.getByTestId('save-usagelimits'));
    expect(await screen.findByText(refusal)).toBeTruthy();
    expect(puts).toEqual([{ key: 'UsageLimitTimeZone', value: 'Mars/Olympus' }]);
  });
});

describe('login toggles', () => {
  it('asks before turning password login off; cancel keeps it on and sends nothing', async () => {
    renderWith(<LoginToggles options={{ PasswordLoginEnabled: 'true', RegisterEnabled: 'true' }} />);
    const toggle = screen.getByTestId('toggle-PasswordLoginEnabled');
    fireEvent.click(toggle);
    await screen.findAllByText('确定要取消密码登录功能吗？');
    const cancel = document.querySelector('.ant-modal-confirm-btns .ant-btn:not(.ant-btn-primary)') as HTMLElement;
    fireEvent.click(cancel);
    // The close animation does not finish in happy-dom; give a would-be save time to happen.
    await new Promise((r) => setTimeout(r, 100));
    expect(toggle.getAttribute('aria-checked')).toBe('true');
    expect(puts).toEqual([]);
  });

  it('confirming sends PasswordLoginEnabled=false; other switches save at once', async () => {
    renderWith(<LoginToggles options={{ PasswordLoginEnabled: 'true', RegisterEnabled: 'true' }} />);
    fireEvent.click(screen.getByTestId('toggle-PasswordLoginEnabled'));
    await screen.findAllByText('确定要取消密码登录功能吗？');
    fireEvent.click(document.querySelector('.ant-modal-confirm-btns .ant-btn-primary') as HTMLElement);
    await waitFor(() => expect(puts).toEqual([{ key: 'PasswordLoginEnabled', value: 'false' }]));
    fireEvent.click(screen.getByTestId('toggle-RegisterEnabled'));
    await waitFor(() => expect(puts[1]).toEqual({ key: 'RegisterEnabled', value: 'false' }));
  });
});

// StreamCacheQueueLength is a new-api option with no effect here (streams are relayed with backpressure, no queue):
// the field stays editable for a shared database, and says so under it.
describe('quota section: StreamCacheQueueLength', () => {
  const quotaOptions: Options = { QuotaRemindThreshold: '1000', StreamCacheQueueLength: '0' };

  it('shows the field with a note that it has no effect here, in Chinese', async () => {
    const { container } = renderWith(
      <OptionSection id="q" title="额度" fields={QUOTA_FIELDS} options={quotaOptions} />,
    );
    expect(container.querySelector('input#StreamCacheQueueLength')).toBeTruthy();
    expect(screen.getByText('流缓存队列长度')).toBeTruthy();
    expect(screen.getByText(/本网关不使用此设置/)).toBeTruthy();
  });

  it('and in English', async () => {
    await i18n.changeLanguage('en');
    renderWith(<OptionSection id="q" title="Quota" fields={QUOTA_FIELDS} options={quotaOptions} />);
    expect(screen.getByText('Stream cache queue length')).toBeTruthy();
    expect(screen.getByText(/has no effect on this gateway/)).toBeTruthy();
  });
});
