// Channels page in the DOM: toolbar tools (test all, update all balances, fix abilities) behind a confirmation,
// batch delete without a selection, the server-side copy (confirmation, POST /api/channel/copy/:id, its failure
// messages) and the drawer's setting/max_input_tokens fields and duplicate-submit guard.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import { drawerInput } from '../../test/drawer.js';
import ChannelPage from './index.js';

const CHANNEL = {
  id: 5,
  type: 1,
  name: 'main-openai',
  base_url: 'https://up.example',
  other: '',
  models: 'gpt-4o-mini,gpt-4o',
  group: 'default,vip',
  model_mapping: '{"gpt-4o":"gpt-4o-2024-08-06"}',
  status_code_mapping: '',
  param_override: '',
  setting: '{"proxy":"http://proxy.local"}',
  max_input_tokens: 4096,
  test_model: '',
  auto_ban: 1,
  priority: 3,
  weight: 1,
  tag: '',
  status: 1,
  response_time: 0,
  balance: 0,
  used_quota: 0,
  other_info: '',
  created_time: 1700000000,
};

/** A slice of GET /api/channel/types: two relayable types, Bedrock, and one the relay refuses. */
const CATALOGUE = [
  {
    value: 1,
    label: 'OpenAI',
    color: 'green',
    default_base_url: 'https://api.openai.com',
    relayable: true,
    key_hint: 'sk-...',
    other_hint: '',
    models: ['gpt-4o'],
  },
  {
    value: 14,
    label: 'Anthropic Claude',
    color: 'purple',
    default_base_url: 'https://api.anthropic.com',
    relayable: true,
    key_hint: 'sk-ant-api03-...',
    other_hint: '',
    models: ['claude-3-5-sonnet-20241022'],
  },
  {
    value: 33,
    label: 'AWS Claude',
    color: 'purple',
    default_base_url: '',
    relayable: true,
    key_hint: 'AccessKeyId|SecretAccessKey|region[|SessionToken]',
    other_hint: '',
    models: ['claude-3-5-sonnet-20241022'],
  },
  {
    value: 2,
    label: 'Midjourney Proxy',
    color: 'blue',
    default_base_url: '',
    relayable: false,
    key_hint: '',
    other_hint: '',
    models: ['mj_imagine'],
  },
];

type Reply = unknown | (() => Promise<Response>);
let calls: Call[];
/** Overrides by "METHOD path" (path without query); a function reply controls the Response itself. */
let replies: Record<string, Reply>;

const envelope = (data: unknown, success = true, message = '') =>
  new Response(JSON.stringify({ success, message, data }), { status: 200 });

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  replies = {};
  calls = recordFetch(({ method, path }) => {
    const reply = replies[`${method} ${path}`];
    if (typeof reply === 'function') return (reply as () => Promise<Response>)();
    if (reply !== undefined) return new Response(JSON.stringify(reply), { status: 200 });
    if (path === '/api/channel/' && method === 'GET') return [CHANNEL];
    if (path === '/api/channel/5') return CHANNEL;
    if (path === '/api/group/') return ['default', 'vip'];
    if (path === '/api/channel/types') return CATALOGUE;
    if (path === '/api/channel/models_enabled') return [];
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

function renderAt(path: string) {
  localStorage.setItem(
    'user',
    JSON.stringify({ id: 1, role: 100, username: 'root', display_name: 'root', status: 1, group: 'default' }),
  );
  const { router } = renderWithApp(
    [
      { path: '/channel', element: <ChannelPage /> },
      { path: '/channel/add', element: <ChannelPage /> },
      { path: '/channel/edit/:id', element: <ChannelPage /> },
    ],
    path,
  );
  return router;
}

const sent = (method: string, path: string) => calls.filter((c) => c.method === method && c.url.split('?')[0] === path);
const listed = () => screen.findByTestId('channel-name-5', {}, { timeout: 5000 });

/** Clicks a toolbar button, checks nothing was sent yet, then confirms its popconfirm. */
async function clickAndConfirm(testId: string, title: string) {
  const before = calls.length;
  fireEvent.click(screen.getByTestId(testId));
  const pop = (await screen.findByText(title)).closest('.ant-popover') as HTMLElement;
  expect(calls.length).toBe(before);
  await act(async () => {
    fireEvent.click(within(pop).getByRole('button', { name: /OK|确\s*定/ }));
  });
}

describe('channel toolbar tools', () => {
  it('test all: confirmation, GET /api/channel/test, started notice', async () => {
    renderAt('/channel');
    await listed();
    await clickAndConfirm('channel-test-all', '确定要测试所有已启用通道吗？');
    expect(sent('GET', '/api/channel/test')).toHaveLength(1);
    expect(await screen.findByText('已成功开始测试所有已启用通道，请刷新页面查看结果。')).toBeTruthy();
  });

  it('test all: a refused run shows the server message', async () => {
    replies['GET /api/channel/test'] = { success: false, message: '测试已在运行中' };
    renderAt('/channel');
    await listed();
    await clickAndConfirm('channel-test-all', '确定要测试所有已启用通道吗？');
    expect(await screen.findByText('测试已在运行中')).toBeTruthy();
  });

  it('update all balances: GET /api/channel/update_balance, done notice, list reloaded', async () => {
    renderAt('/channel');
    await listed();
    const lists = sent('GET', '/api/channel/').length;
    await clickAndConfirm('channel-update-balances', '确定要更新所有已启用通道余额吗？');
    expect(sent('GET', '/api/channel/update_balance')).toHaveLength(1);
    expect(await screen.findByText('已更新完毕所有已启用通道余额！')).toBeTruthy();
    await vi.waitFor(() => expect(sent('GET', '/api/channel/').length).toBe(lists + 1));
  });

  it('fix abilities: POST /api/channel/fix and the fixed count', async () => {
    replies['POST /api/channel/fix'] = { success: true, message: '', data: 3 };
    renderAt('/channel');
    await listed();
    await clickAndConfirm('channel-fix-abilities', '确定是否要修复数据库一致性？');
    expect(sent('POST', '/api/channel/fix')).toHaveLength(1);
    expect(await screen.findByText('已修复 3 个通道！')).toBeTruthy();
  });

  it('batch delete stays enabled without a selection and explains instead of deleting', async () => {
    renderAt('/channel');
    await listed();
    const button = screen.getByTestId('channel-batch-delete') as HTMLButtonElement;
    expect(button.disabled).toBe(false);
    fireEvent.click(button);
    expect(await screen.findByText('请先选择要删除的通道！')).toBeTruthy();
    expect(screen.queryByText(/确定是否要删除所选的/)).toBeNull();
    expect(sent('POST', '/api/channel/batch')).toHaveLength(0);
  });
});

describe('channel copy', () => {
  const COPY = '/api/channel/copy/5';
  const confirmCopy = () => clickAndConfirm('channel-copy-5', '确定是否要复制此渠道「main-openai」？');

  it('confirmation, one POST /api/channel/copy/5 with suffix and reset_balance, success message, list reloaded', async () => {
    replies[`POST ${COPY}`] = { success: true, message: '', data: { id: 6 } };
    const router = renderAt('/channel');
    await listed();
    const lists = sent('GET', '/api/channel/').length;
    await confirmCopy();
    const posts = sent('POST', COPY);
    expect(posts).toHaveLength(1);
    const query = new URLSearchParams(posts[0]!.url.split('?')[1] ?? '');
    expect(query.get('suffix')).toBe('_复制');
    expect(query.get('reset_balance')).toBe('true');
    expect(posts[0]!.body).toBeUndefined();
    expect(await screen.findByText('渠道复制成功')).toBeTruthy();
    await vi.waitFor(() => expect(sent('GET', '/api/channel/').length).toBe(lists + 1));
    // nothing is read client-side and no drawer opens
    expect(sent('GET', '/api/channel/5')).toHaveLength(0);
    expect(router.state.location.pathname).toBe('/channel');
  });

  it('a channel that no longer exists gives 渠道未找到，请刷新页面后重试。', async () => {
    replies[`POST ${COPY}`] = { success: false, message: '渠道不存在' };
    renderAt('/channel');
    await listed();
    const lists = sent('GET', '/api/channel/').length;
    await confirmCopy();
    expect(await screen.findByText('渠道未找到，请刷新页面后重试。')).toBeTruthy();
    expect(sent('GET', '/api/channel/').length).toBe(lists);
  });

  it('another refusal says 渠道复制失败 with the server message', async () => {
    replies[`POST ${COPY}`] = { success: false, message: '数据库错误' };
    renderAt('/channel');
    await listed();
    await confirmCopy();
    expect(await screen.findByText('渠道复制失败：数据库错误')).toBeTruthy();
  });

  it('a failed request gives 渠道复制失败', async () => {
    replies[`POST ${COPY}`] = () => Promise.reject(new TypeError('network down'));
    renderAt('/channel');
    await listed();
    await confirmCopy();
    expect(await screen.findByText('渠道复制失败')).toBeTruthy();
  });

  it('sends nothing when the confirmation is cancelled', async () => {
    renderAt('/channel');
    await listed();
    const before = calls.length;
    fireEvent.click(screen.getByTestId('channel-copy-5'));
    const pop = (await screen.findByText('确定是否要复制此渠道「main-openai」？')).closest(
      '.ant-popover',
    ) as HTMLElement;
    await act(async () => {
      fireEvent.click(within(pop).getByRole('button', { name: /Cancel|取\s*消/ }));
    });
    expect(calls.length).toBe(before);
    expect(sent('POST', COPY)).toHaveLength(0);
  });
});

describe('channel drawer', () => {
  it('keeps a change typed the moment the read channel is shown', async () => {
    // Types into the setting field in the first DOM mutation that shows it out from behind the spinner (a
    // MutationObserver's callback runs before React's passive effects): the form must not be shown before it holds
    // the channel's values, or they would overwrite the change (a loaded machine lost a test's typing so).
    let typed = false;
    const observer = new MutationObserver(() => {
      const el = document.querySelector<HTMLTextAreaElement>('[role="dialog"] [name="setting"]');
      if (typed || !el || el.closest('.ant-spin-spinning')) return;
      typed = true;
      fireEvent.change(el, { target: { value: '{"typed":1}' } });
    });
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    try {
      renderAt('/channel/edit/5');
      await vi.waitFor(() => expect(typed).toBe(true), { timeout: 5000 });
    } finally {
      observer.disconnect();
    }
    // the channel's other values have come in; the typed one stayed
    await vi.waitFor(async () => expect(((await drawerInput('name')) as HTMLInputElement).value).toBe('main-openai'));
    expect(((await drawerInput('setting')) as HTMLTextAreaElement).value).toBe('{"typed":1}');
  });

  it('edits setting and max_input_tokens, rejecting invalid setting JSON', async () => {
    renderAt('/channel/edit/5');
    const name = (await drawerInput('name')) as HTMLInputElement;
    await vi.waitFor(() => expect(name.value).toBe('main-openai'));
    const maxInput = (await drawerInput('max_input_tokens')) as HTMLInputElement;
    expect(maxInput.value).toBe('4096');
    fireEvent.change(await drawerInput('setting'), { target: { value: '{"proxy": ' } });
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-submit'));
    });
    expect(await screen.findByText('渠道额外设置必须是合法的 JSON 格式！')).toBeTruthy();
    expect(sent('PUT', '/api/channel/')).toHaveLength(0);

    fireEvent.change(await drawerInput('setting'), { target: { value: '{"thinking_to_content":true}' } });
    fireEvent.change(maxInput, { target: { value: '8192' } });
    fireEvent.blur(maxInput);
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-submit'));
    });
    const puts = sent('PUT', '/api/channel/');
    expect(puts).toHaveLength(1);
    expect(puts[0]!.body).toMatchObject({ id: 5, setting: '{"thinking_to_content":true}', max_input_tokens: 8192 });
  });

  it('ignores a second submit while the /v1 confirmation is open', async () => {
    replies['GET /api/channel/5'] = {
      success: true,
      message: '',
      data: { ...CHANNEL, base_url: 'https://up.example/v1' },
    };
    renderAt('/channel/edit/5');
    const name = (await drawerInput('name')) as HTMLInputElement;
    await vi.waitFor(() => expect(name.value).toBe('main-openai'));
    fireEvent.click(screen.getByTestId('channel-submit'));
    const confirm = (await screen.findByText(/不需要在末尾加\/v1/)).closest('.ant-modal') as HTMLElement;
    fireEvent.click(screen.getByTestId('channel-submit'));
    expect(await screen.findByText('提交失败，请勿重复提交！')).toBeTruthy();
    await act(async () => {
      fireEvent.click(within(confirm).getByRole('button', { name: /确\s*定/ }));
    });
    await vi.waitFor(() => expect(sent('PUT', '/api/channel/')).toHaveLength(1));
    expect(await screen.findByText('渠道更新成功！')).toBeTruthy();
  });

  it('ignores a second submit while the save request is in flight', async () => {
    let release!: (r: Response) => void;
    replies['PUT /api/channel/'] = () => new Promise<Response>((resolve) => (release = resolve));
    renderAt('/channel/edit/5');
    const name = (await drawerInput('name')) as HTMLInputElement;
    await vi.waitFor(() => expect(name.value).toBe('main-openai'));
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-submit'));
    });
    fireEvent.click(screen.getByTestId('channel-submit'));
    expect(await screen.findByText('提交失败，请勿重复提交！')).toBeTruthy();
    expect(sent('PUT', '/api/channel/')).toHaveLength(1);
    await act(async () => {
      release(envelope(null));
    });
    expect(await screen.findByText('渠道更新成功！')).toBeTruthy();
    expect(sent('PUT', '/api/channel/')).toHaveLength(1);
  });
});

describe('channel drawer models (ChannelModelsField)', () => {
  const chosenModels = () =>
    Array.from(screen.getByTestId('channel-models').closest('.ant-select')!.querySelectorAll('[title]')).map((el) =>
      el.getAttribute('title'),
    );

  it("an edited channel's upstream models come from GET /api/channel/fetch_models/5 and join the chosen ones", async () => {
    replies['GET /api/channel/fetch_models/5'] = { success: true, message: '', data: ['gpt-4o', 'o3-mini'] };
    renderAt('/channel/edit/5');
    const name = (await drawerInput('name')) as HTMLInputElement;
    await vi.waitFor(() => expect(name.value).toBe('main-openai'));
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /获取模型列表/ }));
    });
    expect(await screen.findByText('获取模型列表成功')).toBeTruthy();
    expect(sent('GET', '/api/channel/fetch_models/5')).toHaveLength(1);
    expect(chosenModels()).toEqual(['gpt-4o-mini', 'gpt-4o', 'o3-mini']);
  });

  it('a custom model half typed is gone when the drawer opens again', async () => {
    const router = renderAt('/channel/add');
    const custom = (await drawerInput('custom_model')) as HTMLInputElement;
    fireEvent.change(custom, { target: { value: 'half-typed' } });
    expect(custom.value).toBe('half-typed');
    await act(async () => {
      await router.navigate('/channel');
    });
    await act(async () => {
      await router.navigate('/channel/add');
    });
    await vi.waitFor(async () => expect(((await drawerInput('custom_model')) as HTMLInputElement).value).toBe(''));
  });
});

// spec §8's generic failures when the server refuses without a message of its own
describe('refusals without a message', () => {
  it('a list refresh says 刷新失败', async () => {
    replies['GET /api/channel/'] = { success: false, message: '', data: null };
    renderAt('/channel');
    expect(await screen.findByText('刷新失败')).toBeTruthy();
  });

  it('a channel edit says 更新失败', async () => {
    replies['PUT /api/channel/'] = { success: false, message: '', data: null };
    renderAt('/channel/edit/5');
    const name = (await drawerInput('name')) as HTMLInputElement;
    await vi.waitFor(() => expect(name.value).toBe('main-openai'));
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-submit'));
    });
    expect(await screen.findByText('更新失败')).toBeTruthy();
  });

  it('the server message wins when there is one', async () => {
    replies['GET /api/channel/'] = { success: false, message: '数据库忙', data: null };
    renderAt('/channel');
    expect(await screen.findByText('数据库忙')).toBeTruthy();
    expect(screen.queryByText('刷新失败')).toBeNull();
  });
});

describe('channel types from the server catalogue', () => {
  const typeSelect = () => screen.getByTestId('channel-type').closest('.ant-select') as HTMLElement;
  const openTypes = async () => {
    fireEvent.mouseDown(typeSelect().querySelector('.ant-select-selector, .ant-select-content') ?? typeSelect());
    return vi.waitFor(() => {
      const items = document.querySelectorAll('.ant-select-item-option');
      if (!items.length) throw new Error('the type list is not open');
      return Array.from(items).map((el) => el.textContent);
    });
  };

  it('lists the channel type by its catalogue name', async () => {
    renderAt('/channel');
    await listed();
    expect(await screen.findByText('OpenAI')).toBeTruthy();
    expect(sent('GET', '/api/channel/types')).toHaveLength(1);
  });

  it('offers only relayable types and words the fields from the catalogue', async () => {
    renderAt('/channel/add');
    await drawerInput('name');
    expect(await openTypes()).toEqual(['OpenAI', 'Anthropic Claude', 'AWS Claude']);
    fireEvent.click(screen.getByText('Anthropic Claude', { selector: '.ant-select-item-option-content' }));
    const key = (await drawerInput('key')) as HTMLTextAreaElement;
    await vi.waitFor(() => expect(key.placeholder).toBe('请输入密钥，格式：sk-ant-api03-...，一行一个'));
    const base = (await drawerInput('base_url')) as HTMLInputElement;
    expect(base.placeholder).toContain('https://api.anthropic.com');
  });

  it('creates a channel of an old OpenAI reseller the server lists (OhMyGPT, type 7)', async () => {
    const ohmygpt = {
      value: 7,
      label: 'OhMyGPT',
      color: 'gray',
      default_base_url: 'https://api.ohmygpt.com',
      relayable: true,
      key_hint: '',
      other_hint: '',
      models: ['gpt-4o'],
    };
    replies['GET /api/channel/types'] = {
      success: true,
      message: '',
      data: [CATALOGUE[0], ohmygpt, ...CATALOGUE.slice(1)],
    };
    renderAt('/channel/add');
    await drawerInput('name');
    expect(await openTypes()).toEqual(['OpenAI', 'OhMyGPT', 'Anthropic Claude', 'AWS Claude']);
    fireEvent.click(screen.getByText('OhMyGPT', { selector: '.ant-select-item-option-content' }));
    const base = (await drawerInput('base_url')) as HTMLInputElement;
    await vi.waitFor(() => expect(base.placeholder).toContain('https://api.ohmygpt.com'));
    fireEvent.change(await drawerInput('name'), { target: { value: 'omg' } });
    fireEvent.change(await drawerInput('key'), { target: { value: 'sk-omg' } });
    await vi.waitFor(() => expect(screen.getAllByText('gpt-4o').length).toBeGreaterThan(0));
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-submit'));
    });
    await vi.waitFor(() => expect(sent('POST', '/api/channel/')).toHaveLength(1));
    expect(sent('POST', '/api/channel/')[0]!.body).toMatchObject({
      type: 7,
      name: 'omg',
      key: 'sk-omg',
      models: 'gpt-4o',
    });
  });

  it('refuses a Bedrock key that is not AK|SK|region before sending it', async () => {
    // the server's channel check (POST /api/channel/check) answers by the Bedrock provider's rules
    const BAD_KEY = '密钥格式应为 AccessKeyId|SecretAccessKey|region，临时凭证再加 |SessionToken！';
    replies['POST /api/channel/check'] = () => Promise.resolve(envelope({ field: 'key' }, false, BAD_KEY));
    renderAt('/channel/add');
    await drawerInput('name');
    await openTypes();
    fireEvent.click(screen.getByText('AWS Claude', { selector: '.ant-select-item-option-content' }));
    fireEvent.change(await drawerInput('name'), { target: { value: 'bedrock' } });
    fireEvent.change(await drawerInput('key'), { target: { value: 'AKIAEXAMPLE|secret' } });
    await vi.waitFor(() => expect(screen.getAllByText('claude-3-5-sonnet-20241022').length).toBeGreaterThan(0));
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-submit'));
    });
    expect(
      await screen.findByText('密钥格式应为 AccessKeyId|SecretAccessKey|region，临时凭证再加 |SessionToken！'),
    ).toBeTruthy();
    expect(sent('POST', '/api/channel/')).toHaveLength(0);
    expect(sent('POST', '/api/channel/check')[0]!.body).toMatchObject({ type: 33, key: 'AKIAEXAMPLE|secret' });
    // the key, the field the server named, is marked
    const keyItem = (await drawerInput('key')).closest('.ant-form-item');
    expect(keyItem?.classList.contains('ant-form-item-has-error')).toBe(true);
    delete replies['POST /api/channel/check'];
    fireEvent.change(await drawerInput('key'), { target: { value: 'AKIAEXAMPLE|secret|us-east-1' } });
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-submit'));
    });
    await vi.waitFor(() => expect(sent('POST', '/api/channel/')).toHaveLength(1));
    expect(sent('POST', '/api/channel/')[0]!.body).toMatchObject({
      type: 33,
      key: 'AKIAEXAMPLE|secret|us-east-1',
      models: 'claude-3-5-sonnet-20241022',
    });
  });

  it('shows an edited channel of a refused type under its name', async () => {
    replies['GET /api/channel/5'] = { success: true, message: '', data: { ...CHANNEL, type: 2 } };
    renderAt('/channel/edit/5');
    const name = (await drawerInput('name')) as HTMLInputElement;
    await vi.waitFor(() => expect(name.value).toBe('main-openai'));
    await vi.waitFor(() => expect(typeSelect().textContent).toContain('Midjourney Proxy'));
    expect(await openTypes()).toEqual(['OpenAI', 'Anthropic Claude', 'AWS Claude', 'Midjourney Proxy']);
  });
});
