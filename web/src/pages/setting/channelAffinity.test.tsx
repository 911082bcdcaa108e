// The channel affinity section: rules that are not JSON, not an array or carry a bad regex are refused before anything
// is sent; a change saves only the changed rows (the rules compacted); the cache statistics show per rule, and
// clearing all sends new-api's DELETE.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { App } from 'antd';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import i18n from '../../i18n/index.js';
import { StatusProvider } from '../../context/status.js';
import { recordFetch, type Call } from '../../test/harness.js';
import ChannelAffinitySection from './ChannelAffinitySection.js';
import { affinityChanges, formOf, rulesProblem } from './channelAffinity.js';

const RULE = {
  name: 'claude cli trace',
  model_regex: ['^claude-.*$'],
  path_regex: ['/v1/messages'],
  key_sources: [{ type: 'gjson', path: 'metadata.user_id' }],
  value_regex: '',
  ttl_seconds: 0,
  skip_retry_on_failure: true,
  include_using_group: true,
  include_model_name: false,
  include_rule_name: true,
};
const options = {
  'channel_affinity_setting.enabled': 'true',
  'channel_affinity_setting.switch_on_success': 'true',
  'channel_affinity_setting.keep_on_channel_disabled': 'false',
  'channel_affinity_setting.max_entries': '100000',
  'channel_affinity_setting.default_ttl_seconds': '3600',
  'channel_affinity_setting.rules': JSON.stringify([RULE]),
};
const STATS = {
  enabled: true,
  total: 4,
  unknown: 1,
  by_rule_name: { 'claude cli trace': 3 },
  cache_capacity: 100000,
  cache_algo: 'lru',
};

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('en');
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/option/channel_affinity_cache') return method === 'DELETE' ? { deleted: 4 } : STATS;
    if (method === 'PUT' && path === '/api/option/')
      return new Response(JSON.stringify({ success: true, message: '' }));
    if (path === '/api/option/') return [];
    return { setup: true };
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function renderSection() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <StatusProvider initial={{ setup: true }}>
        <App>
          <ChannelAffinitySection options={options} />
        </App>
      </StatusProvider>
    </QueryClientProvider>,
  );
}

const writes = () => calls.filter((c) => c.method !== 'GET');

describe('channel affinity settings', () => {
  it('checks the rules as the server does', () => {
    expect(rulesProblem('[{"name":')).toEqual({ key: 'badJson' });
    expect(rulesProblem('{}')).toEqual({ key: 'notArray' });
    expect(rulesProblem(JSON.stringify([{ ...RULE, model_regex: ['(?i)^claude-'] }]))).toBeNull();
    expect(rulesProblem(JSON.stringify([{ ...RULE, path_regex: ['(unclosed'] }]))).toEqual({
      key: 'badRegex',
      at: 'claude cli trace',
    });
    expect(rulesProblem(JSON.stringify([{ ...RULE, key_sources: [{ type: 'cookie' }] }]))).toMatchObject({
      key: 'badSource',
    });
    // formatting alone is no change
    expect(affinityChanges(options, formOf(options))).toEqual([]);
  });

  it('refuses bad JSON before sending anything, and saves only what changed', async () => {
    renderSection();
    const rules = screen.getByTestId('affinity-rules') as HTMLTextAreaElement;
    fireEvent.change(rules, { target: { value: '[{"name": "x",' } });
    expect(await screen.findByText('The rules are not valid JSON')).toBeTruthy();
    expect((screen.getByTestId('save-affinity') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId('save-affinity'));
    expect(writes()).toEqual([]);

    fireEvent.change(rules, { target: { value: JSON.stringify([{ ...RULE, ttl_seconds: 600 }], null, 4) } });
    fireEvent.click(screen.getByTestId('affinity-keep_on_channel_disabled'));
    await act(async () => {
      fireEvent.click(screen.getByTestId('save-affinity'));
    });
    await waitFor(() => expect(writes()).toHaveLength(2));
    expect(writes()).toEqual([
      {
        method: 'PUT',
        url: '/api/option/',
        body: { key: 'channel_affinity_setting.keep_on_channel_disabled', value: 'true' },
      },
      {
        method: 'PUT',
        url: '/api/option/',
        body: { key: 'channel_affinity_setting.rules', value: JSON.stringify([{ ...RULE, ttl_seconds: 600 }]) },
      },
    ]);
  });

  it('shows the cache per rule and clears it all', async () => {
    renderSection();
    expect(await screen.findByText('claude cli trace')).toBeTruthy();
    expect(screen.getByText('lru')).toBeTruthy();
    await act(async () => {
      fireEvent.click(screen.getByTestId('affinity-clear-all'));
    });
    await waitFor(() => expect(writes()).toHaveLength(1));
    expect(writes()[0]).toEqual({ method: 'DELETE', url: '/api/option/channel_affinity_cache?all=true' });
    expect(await screen.findByText('Cleared 4 entries')).toBeTruthy();
  });
});
