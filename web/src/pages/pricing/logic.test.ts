import { describe, expect, it } from 'vitest';
import {
  callPrice,
  completionPrice,
  displayCompletionRatio,
  filterPricing,
  formatAmount,
  groupRatioOf,
  initialGroup,
  isAvailable,
  matchesSearch,
  promptPrice,
  selectedModelsText,
  sortPricing,
  usableGroupsOf,
  type PricingRow,
} from './logic.js';

const row = (model_name: string, over: Partial<PricingRow> = {}): PricingRow => ({
  model_name,
  quota_type: 0,
  model_ratio: 1,
  model_price: 0,
  owner_by: '',
  completion_ratio: 1,
  enable_groups: ['default'],
  ...over,
});

describe('pricing formulas (spec §9)', () => {
  it('prompt price = model ratio × 2 × group ratio per 1M tokens', () => {
    // gpt-4o-mini: ratio 0.075 → $0.15 / 1M at group ratio 1, $0.225 at 1.5
    expect(promptPrice(row('gpt-4o-mini', { model_ratio: 0.075 }), 1)).toBeCloseTo(0.15, 12);
    expect(promptPrice(row('gpt-4o-mini', { model_ratio: 0.075 }), 1.5)).toBeCloseTo(0.225, 12);
    expect(promptPrice(row('gpt-4', { model_ratio: 15 }), 2)).toBe(60);
  });

  it('completion price = model ratio × completion ratio × 2 × group ratio per 1M tokens', () => {
    expect(completionPrice(row('gpt-4o-mini', { model_ratio: 0.075, completion_ratio: 4 }), 1)).toBeCloseTo(0.6, 12);
    expect(completionPrice(row('gpt-4', { model_ratio: 15, completion_ratio: 2 }), 0.5)).toBe(30);
  });

  it('per-call price = model price × group ratio', () => {
    expect(callPrice(row('mj_imagine', { quota_type: 1, model_price: 0.1 }), 1)).toBeCloseTo(0.1, 12);
    expect(callPrice(row('mj_imagine', { quota_type: 1, model_price: 0.1 }), 3)).toBeCloseTo(0.3, 12);
  });

  it('formats dollars without float noise, or as quota units when currency display is off', () => {
    expect(formatAmount(0.1 * 3, { inCurrency: true, quotaPerUnit: 500000 }).text).toBe('$0.3');
    expect(formatAmount(0.15, { inCurrency: true, quotaPerUnit: 500000 })).toEqual({ text: '$0.15', unit: 'currency' });
    // $0.15 per 1M tokens = 75000 quota at 500000 per dollar (= 0.075 quota per token × 1M).
    expect(formatAmount(0.15, { inCurrency: false, quotaPerUnit: 500000 })).toEqual({ text: '75000', unit: 'quota' });
    expect(displayCompletionRatio(4 / 3)).toBe('1.333');
  });
});

describe('groups', () => {
  it('looks up group ratios, 1 for groups the server did not list', () => {
    expect(groupRatioOf({ default: 1, vip: 1.5 }, 'vip')).toBe(1.5);
    expect(groupRatioOf({ default: 1 }, 'svip')).toBe(1);
    expect(groupRatioOf(undefined, 'default')).toBe(1);
  });

  it('views the user group first, the default group for guests', () => {
    expect(initialGroup({ group: 'vip' })).toBe('vip');
    expect(initialGroup(null)).toBe('default');
    expect(initialGroup({ group: '' })).toBe('default');
  });

  it('switching the viewed group changes availability and every price', () => {
    const r = row('gpt-4o', { model_ratio: 1.25, completion_ratio: 4, enable_groups: ['default', 'vip'] });
    const ratios = { default: 1, vip: 2, svip: 0.5 };
    const view = (g: string) => ({
      available: isAvailable(r, g),
      prompt: promptPrice(r, groupRatioOf(ratios, g)),
      completion: completionPrice(r, groupRatioOf(ratios, g)),
    });
    expect(view('default')).toEqual({ available: true, prompt: 2.5, completion: 10 });
    expect(view('vip')).toEqual({ available: true, prompt: 5, completion: 20 });
    expect(view('svip')).toEqual({ available: false, prompt: 1.25, completion: 5 });
  });

  it('lists only the usable groups of a model, in the server order', () => {
    const r = row('m', { enable_groups: ['default', 'internal', 'vip'] });
    expect(usableGroupsOf(r, { vip: 'vip分组', default: '默认分组' })).toEqual(['default', 'vip']);
    expect(usableGroupsOf(r, undefined)).toEqual([]);
    // Inherited object keys are not groups.
    expect(usableGroupsOf(row('m', { enable_groups: ['toString'] }), {})).toEqual([]);
  });
});

describe('sorting and search', () => {
  it('puts gpt models first, then per-token before per-call, keeping the server order otherwise', () => {
    const rows = [
      row('claude-3', { quota_type: 0 }),
      row('dall-e-3', { quota_type: 1 }),
      row('gpt-image', { quota_type: 1 }),
      row('abab', { quota_type: 1 }),
      row('gpt-4o', { quota_type: 0 }),
      row('GPT-3.5-turbo', { quota_type: 0 }),
      row('gemini', { quota_type: 0 }),
    ];
    expect(sortPricing(rows).map((r) => r.model_name)).toEqual([
      'gpt-4o',
      'GPT-3.5-turbo',
      'gpt-image',
      'claude-3',
      'gemini',
      'dall-e-3',
      'abab',
    ]);
    // The input is not mutated.
    expect(rows[0]!.model_name).toBe('claude-3');
  });

  it('matches model names fuzzily: case-insensitive, every word anywhere', () => {
    expect(matchesSearch('gpt-4o-mini', '')).toBe(true);
    expect(matchesSearch('gpt-4o-mini', '  ')).toBe(true);
    expect(matchesSearch('gpt-4o-mini', 'MINI')).toBe(true);
    expect(matchesSearch('gpt-4o-mini', 'gpt mini')).toBe(true);
    expect(matchesSearch('gpt-4o-mini', 'mini gpt')).toBe(true);
    expect(matchesSearch('gpt-4o-mini', 'gpt claude')).toBe(false);
    const rows = [row('gpt-4o'), row('gpt-4o-mini'), row('claude-3-haiku')];
    expect(filterPricing(rows, '4o').map((r) => r.model_name)).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(filterPricing(rows, 'haiku').map((r) => r.model_name)).toEqual(['claude-3-haiku']);
  });

  it('copies the selected names joined by commas', () => {
    expect(selectedModelsText(['gpt-4o', 'claude-3'])).toBe('gpt-4o,claude-3');
  });
});
