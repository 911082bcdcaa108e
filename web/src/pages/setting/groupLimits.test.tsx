// The groups' default usage limits form: rows from the stored option and the group list (GroupRatio), and a save that
// sends the option's exact JSON through PUT /api/option/ (or nothing when nothing changed).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { App } from 'antd';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import i18n from '../../i18n/index.js';
import { StatusProvider } from '../../context/status.js';
import { recordFetch, type Call } from '../../test/harness.js';
import GroupLimitsSection from './GroupLimitsSection.js';
import { groupDefaultsJson, groupLimitRows } from './groupLimits.js';

let calls: Call[];
let putReply: { success: boolean; message: string } = { success: true, message: '' };

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('display_in_currency', 'false');
  putReply = { success: true, message: '' };
  calls = recordFetch(({ method, path }) => {
    if (method === 'PUT' && path === '/api/option/') return new Response(JSON.stringify(putReply));
    if (path === '/api/option/') return [];
    return { setup: true };
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const options = {
  GroupRatio: '{"default":1,"vip":1.5}',
  UsageLimitGroupDefaults: '{"vip":{"rpm":60,"budget":500000,"period":"daily"},"gone":{"tpm":100}}',
};

function renderSection() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <StatusProvider initial={{ setup: true }}>
        <App>
          <GroupLimitsSection options={options} />
        </App>
      </StatusProvider>
    </QueryClientProvider>,
  );
}

const input = (id: string) => screen.getByTestId(id) as HTMLInputElement;
const puts = () => calls.filter((c) => c.method === 'PUT');

describe('group default limits', () => {
  it('lists every group with a ratio and every group with defaults, read as the server reads them', () => {
    // a digit string is a number to the server's parser, so the form reads it as one
    expect(
      groupLimitRows({ ...options, UsageLimitGroupDefaults: options.UsageLimitGroupDefaults.replace('100', '"100"') }),
    ).toEqual([
      { group: 'default', rpm: undefined, tpm: undefined, budget: undefined },
      { group: 'vip', rpm: 60, tpm: undefined, budget: 500000, period: 'daily' },
      { group: 'gone', rpm: undefined, tpm: 100, budget: undefined },
    ]);
    expect(
      groupDefaultsJson([{ group: 'a', tpm: 5, period: 'weekly' }, { group: 'b' }, { group: 'c', budget: 9 }]),
    ).toBe('{"a":{"tpm":5},"c":{"budget":9,"period":"monthly"}}');
    // a rolling reset goes with a budget only, and is read back
    const rolling = groupDefaultsJson([
      { group: 'r', budget: 9, period: 'weekly', reset: 'rolling' },
      { group: 's', tpm: 5, reset: 'rolling' },
    ]);
    expect(rolling).toBe('{"r":{"budget":9,"period":"weekly","reset":"rolling"},"s":{"tpm":5}}');
    expect(groupLimitRows({ GroupRatio: '{}', UsageLimitGroupDefaults: rolling })[0]).toMatchObject({
      group: 'r',
      reset: 'rolling',
    });
  });

  it('loads the option into the form and saves the exact JSON', async () => {
    renderSection();
    expect(input('group-limit-vip-rpm').value).toBe('60');
    expect(input('group-limit-vip-budget').value).toBe('500000');
    expect(input('group-limit-gone-tpm').value).toBe('100');
    expect(input('group-limit-default-rpm').value).toBe('');

    fireEvent.click(screen.getByTestId('save-group-limits'));
    expect(await screen.findByText('你似乎并没有修改什么')).toBeTruthy();
    expect(puts()).toEqual([]);

    fireEvent.change(input('group-limit-default-tpm'), { target: { value: '2000' } });
    fireEvent.change(input('group-limit-gone-tpm'), { target: { value: '' } });
    fireEvent.change(input('group-limit-vip-rpm'), { target: { value: '30' } });
    await act(async () => {
      fireEvent.click(screen.getByTestId('save-group-limits'));
    });
    await waitFor(() => expect(puts()).toHaveLength(1));
    expect(puts()[0]).toEqual({
      method: 'PUT',
      url: '/api/option/',
      body: {
        key: 'UsageLimitGroupDefaults',
        value: '{"default":{"tpm":2000},"vip":{"rpm":30,"budget":500000,"period":"daily"}}',
      },
    });
    expect(await screen.findByText('保存成功')).toBeTruthy();
  });

  it('shows the server’s refusal', async () => {
    putReply = { success: false, message: 'group vip: rpm must be a whole number of 0 or more' };
    renderSection();
    fireEvent.change(input('group-limit-vip-rpm'), { target: { value: '7' } });
    await act(async () => {
      fireEvent.click(screen.getByTestId('save-group-limits'));
    });
    expect(await screen.findByText('group vip: rpm must be a whole number of 0 or more')).toBeTruthy();
  });
});
