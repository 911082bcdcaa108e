// Quota formulas pinned to the unit with hand-computed values (new-api-compat.md §5.2–5.3), over a real OptionStore.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  PricingError,
  audioQuota,
  audioUsageOf,
  isAudioChatModel,
  claudeQuota,
  getCacheCreationRatio,
  getCacheRatio,
  getGroupRatio,
  getModelPrice,
  getModelRatio,
  getPriceData,
  imageQuota,
  preConsumeQuota,
  pricePer1M,
  roundQuota,
  taskQuota,
  textQuota,
  truncQuota,
  trustedReservation,
  usageFromClaude,
  validateImageSize,
  type PriceData,
} from '../../src/services/pricing/index.js';
import { defaultOptions, type OptionStore } from '../../src/services/options.js';
import { sqliteOptions, type TestOptions } from './option-store.js';

const UNIT = 500000;
let t: TestOptions;
let options: OptionStore;

beforeAll(async () => {
  t = await sqliteOptions();
  options = t.options;
});
afterAll(async () => t.close());

// Every test starts from new-api's defaults for the keys it may change.
const MUTABLE = [
  'ModelRatio',
  'ModelPrice',
  'CompletionRatio',
  'CacheRatio',
  'GroupRatio',
  'SelfUseModeEnabled',
  'PreConsumedQuota',
];
beforeEach(async () => {
  const d = defaultOptions();
  for (const k of MUTABLE) await options.set(k, d[k]!);
  await options.set('CreateCacheRatio', '');
});

describe('price lookup', () => {
  it('reads the compiled defaults', () => {
    expect(getModelRatio(options, 'gpt-4o')).toEqual({ ratio: 1.25, found: true });
    expect(getModelRatio(options, 'claude-3-opus-20240229')).toEqual({ ratio: 7.5, found: true });
    expect(getModelRatio(options, 'no-such-model')).toEqual({ ratio: 37.5, found: false });
    expect(getModelPrice(options, 'dall-e-3')).toEqual({ price: 0.04, found: true });
    expect(getModelPrice(options, 'gpt-4o')).toEqual({ price: -1, found: false });
  });

  it('uses an o-series model’s own -high/-low/-medium entry, else the base model’s ratio', () => {
    expect(getModelRatio(options, 'o3-mini-2025-01-31-high')).toEqual({ ratio: 0.55, found: true });
    expect(getModelRatio(options, 'o1-high')).toEqual({ ratio: 7.5, found: true });
    expect(getModelRatio(options, 'o1-pro-low')).toEqual({ ratio: 75, found: true });
    expect(getModelRatio(options, 'gpt-4o-high').found).toBe(false);
  });

  it('collapses gizmo models to their family entry (both gpt-4 and gpt-4o)', () => {
    expect(getModelPrice(options, 'gpt-4-gizmo-g-abc')).toEqual({ price: 0.1, found: true });
    expect(getModelRatio(options, 'gpt-4-gizmo-g-abc')).toEqual({ ratio: 15, found: true });
    // new-api never normalises gpt-4o-gizmo in GetModelRatio, so its default 2.5 is unreachable there.
    expect(getModelRatio(options, 'gpt-4o-gizmo-g-xyz')).toEqual({ ratio: 2.5, found: true });
    expect(getPriceData(options, 'gpt-4-gizmo-g-abc', 'default').usePrice).toBe(true);
  });

  it('honours option overrides, and a saved map replaces the defaults entirely', async () => {
    await options.set('ModelRatio', JSON.stringify({ 'my-model': 3 }));
    expect(getModelRatio(options, 'my-model')).toEqual({ ratio: 3, found: true });
    expect(getModelRatio(options, 'gpt-4o').found).toBe(false);
    await options.set('GroupRatio', JSON.stringify({ default: 1, vip: 1.5 }));
    expect(getGroupRatio(options, 'vip')).toBe(1.5);
    expect(getGroupRatio(options, 'missing')).toBe(1);
  });

  it('cache ratios: option map with default 1; cache creation from the compiled table, default 1.25', async () => {
    expect(getCacheRatio(options, 'gpt-4o')).toBe(0.5);
    expect(getCacheRatio(options, 'deepseek-chat')).toBe(0.25);
    expect(getCacheRatio(options, 'claude-3-5-sonnet-20241022')).toBe(0.1);
    expect(getCacheRatio(options, 'gpt-3.5-turbo')).toBe(1);
    expect(getCacheCreationRatio(options, 'claude-3-5-sonnet-20241022')).toBe(1.25);
    expect(getCacheCreationRatio(options, 'anything-else')).toBe(1.25);
    await options.set('CacheRatio', JSON.stringify({ 'gpt-3.5-turbo': 0.2 }));
    expect(getCacheRatio(options, 'gpt-3.5-turbo')).toBe(0.2);
    expect(getCacheRatio(options, 'gpt-4o')).toBe(1);
    await options.set('CreateCacheRatio', JSON.stringify({ 'claude-3-opus-20240229': 2 }));
    expect(getCacheCreationRatio(options, 'claude-3-opus-20240229')).toBe(2);
    expect(getCacheCreationRatio(options, 'claude-3-haiku-20240307')).toBe(1.25);
  });

  it('rejects unpriced models unless self-use mode is on or the user accepts unset ratios', async () => {
    expect(() => getPriceData(options, 'mystery', 'default')).toThrow(PricingError);
    expect(() => getPriceData(options, 'mystery', 'default')).toThrow(/^模型 mystery 倍率或价格未配置/);
    expect(getPriceData(options, 'mystery', 'default', { acceptUnsetRatio: true }).modelRatio).toBe(37.5);
    await options.set('SelfUseModeEnabled', 'true');
    const p = getPriceData(options, 'mystery', 'default');
    expect(p).toMatchObject({
      usePrice: false,
      modelRatio: 37.5,
      completionRatio: 1,
      cacheRatio: 1,
      cacheCreationRatio: 1.25,
      groupRatio: 1,
    });
  });
});

describe('text quota', () => {
  it('gpt-4o, 1000 prompt + 200 completion at group ratio 1 → 2250', () => {
    const p = getPriceData(options, 'gpt-4o', 'default');
    expect(p).toMatchObject({ modelRatio: 1.25, completionRatio: 4, cacheRatio: 0.5, groupRatio: 1 });
    // (1000 + 200 × 4) × 1.25 × 1
    expect(textQuota(p, { prompt_tokens: 1000, completion_tokens: 200 }, UNIT)).toBe(2250);
  });

  it('bills cached prompt tokens at the cache ratio (cached ⊂ prompt, OpenAI style)', () => {
    const p = getPriceData(options, 'gpt-4o', 'default');
    // (600 + 400 × 0.5 + 200 × 4) × 1.25 = 1600 × 1.25
    expect(textQuota(p, { prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 400 }, UNIT)).toBe(2000);
    // cached beyond prompt is clamped: (0 + 1000 × 0.5 + 0) × 1.25
    expect(textQuota(p, { prompt_tokens: 1000, completion_tokens: 0, cached_tokens: 5000 }, UNIT)).toBe(625);
  });

  it('multiplies by the group ratio from the GroupRatio option', async () => {
    await options.set('GroupRatio', JSON.stringify({ default: 1, vip: 1.5 }));
    const p = getPriceData(options, 'gpt-4o', 'vip');
    expect(textQuota(p, { prompt_tokens: 1000, completion_tokens: 200 }, UNIT)).toBe(3375);
  });

  it('per-call models: price × QuotaPerUnit × group ratio', async () => {
    await options.set('GroupRatio', JSON.stringify({ default: 1, svip: 2 }));
    const p = getPriceData(options, 'dall-e-3', 'svip');
    expect(p.usePrice).toBe(true);
    expect(textQuota(p, { prompt_tokens: 10, completion_tokens: 5 }, UNIT)).toBe(40000);
  });

  it('charges at least 1 when the ratio is non-zero, and 0 when there were no tokens at all', async () => {
    const mini = getPriceData(options, 'gpt-4o-mini', 'default');
    // 1 × 0.075 = 0.075 → rounds to 0 → 1
    expect(textQuota(mini, { prompt_tokens: 1, completion_tokens: 0 }, UNIT)).toBe(1);
    expect(textQuota(mini, { prompt_tokens: 0, completion_tokens: 0 }, UNIT)).toBe(0);
    expect(
      textQuota(getPriceData(options, 'dall-e-3', 'default'), { prompt_tokens: 0, completion_tokens: 0 }, UNIT),
    ).toBe(0);
    // glm-4-flash is free: ratio 0 stays 0
    expect(
      textQuota(getPriceData(options, 'glm-4-flash', 'default'), { prompt_tokens: 100, completion_tokens: 100 }, UNIT),
    ).toBe(0);
  });

  it('rounds half away from zero in decimal, not binary', async () => {
    await options.set('ModelRatio', JSON.stringify({ m145: 0.145, quarter: 0.25 }));
    // 100 × 0.145 is 14.499999999999998 in binary floating point, 14.5 in decimal → 15
    expect(
      textQuota(getPriceData(options, 'm145', 'default'), { prompt_tokens: 100, completion_tokens: 0 }, UNIT),
    ).toBe(15);
    // 6 × 0.25 = 1.5 → 2
    expect(
      textQuota(getPriceData(options, 'quarter', 'default'), { prompt_tokens: 6, completion_tokens: 0 }, UNIT),
    ).toBe(2);
    expect(roundQuota(-2.5)).toBe(-3);
    expect(truncQuota(0.1 * 3 * UNIT)).toBe(150000);
  });

  it('gives the decimal answer whether or not it skips the decimal clean-up (products of real ratios and counts)', () => {
    // the definition: clean to 15 significant digits, then round half away from zero / truncate toward zero
    const clean = (x: number) => (Number.isFinite(x) && x !== 0 ? Number(x.toPrecision(15)) : x);
    const round = (x: number) => Math.sign(clean(x)) * Math.round(Math.abs(clean(x)));
    const trunc = (x: number) => Math.trunc(clean(x));
    const ratios = [0.1, 0.145, 0.15, 0.25, 0.3, 0.075, 1.25, 2.5, 0.0375, 7.5, 15, 37.5, 0.6, 1 / 3, 0.7, 1.1];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
    const values: number[] = [
      0,
      -0,
      0.5,
      -0.5,
      1.5,
      -2.5,
      2.4999999999999996,
      14.499999999999998,
      0.44999999999999996,
      1e15 + 0.5,
      NaN,
      Infinity,
      -Infinity,
    ];
    for (let i = 0; i < 20000; i++) {
      const tokens = next() % 200000;
      const x = tokens * ratios[next() % ratios.length] * ratios[next() % ratios.length];
      values.push(x, -x, (x * UNIT) / 1000, x + 0.5);
    }
    const same = (a: number, b: number) => a === b || Object.is(a, b);
    const wrong = values.flatMap((x) => [
      ...(same(roundQuota(x), round(x)) ? [] : [`round(${x}) = ${roundQuota(x)}, not ${round(x)}`]),
      ...(same(truncQuota(x), trunc(x)) ? [] : [`trunc(${x}) = ${truncQuota(x)}, not ${trunc(x)}`]),
    ]);
    expect(wrong).toEqual([]);
  });
});

describe('Claude usage', () => {
  const claude = {
    input_tokens: 1000,
    cache_read_input_tokens: 2000,
    cache_creation_input_tokens: 400,
    output_tokens: 100,
  };

  it('claudeQuota: input excludes cache reads; writes billed at the creation ratio', () => {
    const p = getPriceData(options, 'claude-3-5-sonnet-20241022', 'default');
    expect(p).toMatchObject({ modelRatio: 1.5, completionRatio: 5, cacheRatio: 0.1, cacheCreationRatio: 1.25 });
    // (1000 + 2000 × 0.1 + 400 × 1.25 + 100 × 5) × 1 × 1.5 = 2200 × 1.5
    expect(claudeQuota(p, claude, UNIT)).toBe(3300);
  });

  it('usageFromClaude + textQuota bills the same (fixing new-api’s double subtraction on /v1/chat/completions)', () => {
    const p = getPriceData(options, 'claude-3-5-sonnet-20241022', 'default');
    const u = usageFromClaude(claude);
    expect(u).toEqual({ prompt_tokens: 3000, completion_tokens: 100, cached_tokens: 2000, cache_creation_tokens: 400 });
    expect(textQuota(p, u, UNIT)).toBe(3300);
    // What new-api charges: the generic formula on input_tokens, cache subtracted again, creation ignored:
    // (1000 − 2000 + 200 + 500) × 1.5 < 0 → 1
    const buggy = textQuota(p, { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 1000 }, UNIT);
    expect(buggy).toBeLessThan(3300);
  });

  it('truncates like new-api’s float maths', async () => {
    await options.set('ModelRatio', JSON.stringify({ 'claude-3-x': 0.3 }));
    const p = getPriceData(options, 'claude-3-x', 'default');
    // (7 + 0 + 0 + 1 × 5) × 0.3 = 3.6 → 3
    expect(claudeQuota(p, { input_tokens: 7, output_tokens: 1 }, UNIT)).toBe(3);
    expect(claudeQuota(p, { input_tokens: 0, output_tokens: 0 }, UNIT)).toBe(0);
  });
});

describe('audio quota', () => {
  it('gpt-4o-audio-preview: audio ratio 40, audio completion ratio 2', () => {
    const p = getPriceData(options, 'gpt-4o-audio-preview', 'default');
    // (100 + 50 × 4 + 10 × 40 + 20 × 40 × 2) × 1.25 = 2300 × 1.25
    expect(
      audioQuota(p, { textInput: 100, textOutput: 50, audioInput: 10, audioOutput: 20 }, 'gpt-4o-audio-preview'),
    ).toBe(2875);
  });

  it('realtime 2024-12-17 snapshot: audio ratio 8', () => {
    const m = 'gpt-4o-realtime-preview-2024-12-17';
    const p = getPriceData(options, m, 'default');
    // (100 + 10 × 4 + 50 × 8 + 25 × 8 × 2) × 2.5 = 940 × 2.5
    expect(audioQuota(p, { textInput: 100, textOutput: 10, audioInput: 50, audioOutput: 25 }, m)).toBe(2350);
  });

  it('a per-call price wins over the audio formula', () => {
    const p = { ...getPriceData(options, 'gpt-4o-audio-preview', 'default'), usePrice: true, modelPrice: 0.01 };
    // 0.01 × 500000 × 1
    expect(
      audioQuota(p, { textInput: 1, textOutput: 1, audioInput: 1, audioOutput: 1 }, 'gpt-4o-audio-preview', 500000),
    ).toBe(5000);
  });

  it('splits an OpenAI usage by modality (the audio details; the rest of each side is text)', () => {
    expect(audioUsageOf({ prompt_tokens: 100, completion_tokens: 200, audio_input: 40, audio_output: 150 })).toEqual({
      textInput: 60,
      textOutput: 50,
      audioInput: 40,
      audioOutput: 150,
    });
    expect(audioUsageOf({ prompt_tokens: 10, completion_tokens: 5 })).toEqual({
      textInput: 10,
      textOutput: 5,
      audioInput: 0,
      audioOutput: 0,
    });
    // a malformed usage cannot make text negative
    expect(audioUsageOf({ prompt_tokens: 10, completion_tokens: 5, audio_input: 30, audio_output: 9 })).toEqual({
      textInput: 0,
      textOutput: 0,
      audioInput: 10,
      audioOutput: 5,
    });
    expect(isAudioChatModel('gpt-4o-audio-preview-2024-12-17')).toBe(true);
    expect(isAudioChatModel('gpt-4o-mini-audio-preview')).toBe(true);
    expect(isAudioChatModel('gpt-4o-mini')).toBe(false);
  });

  it('mini realtime: audio ratio 10/0.6', () => {
    const m = 'gpt-4o-mini-realtime-preview';
    const p = getPriceData(options, m, 'default');
    // (0 + 0 + 3 × 16.67 + 0) × 0.3 = 50 × 0.3
    expect(audioQuota(p, { textInput: 0, textOutput: 0, audioInput: 3, audioOutput: 0 }, m)).toBe(15);
  });
});

describe('image quota', () => {
  it('dall-e-3 per call with size and quality multipliers', async () => {
    const p = getPriceData(options, 'dall-e-3', 'default');
    // 0.04 × 2 (1024x1792) × 1.5 (hd, tall) × 1 × 500000
    expect(imageQuota(p, { model: 'dall-e-3', size: '1024x1792', quality: 'hd', n: 1 }, UNIT)).toBe(60000);
    // 0.04 × 1 × 2 (hd) × 1
    expect(imageQuota(p, { model: 'dall-e-3', size: '1024x1024', quality: 'hd' }, UNIT)).toBe(40000);
    // standard, n = 2
    expect(imageQuota(p, { model: 'dall-e-3', n: 2 }, UNIT)).toBe(40000);
    await options.set('GroupRatio', JSON.stringify({ default: 1, half: 0.5 }));
    expect(imageQuota(getPriceData(options, 'dall-e-3', 'half'), { model: 'dall-e-3' }, UNIT)).toBe(10000);
  });

  it('ratio mode: one image costs 0.0025 × model ratio USD', async () => {
    await options.set('ModelRatio', JSON.stringify({ 'dall-e-2': 8 }));
    const p = getPriceData(options, 'dall-e-2', 'default');
    // 0.0025 × 8 × 0.4 (256x256) × 3 × 500000
    expect(imageQuota(p, { model: 'dall-e-2', size: '256x256', n: 3 }, UNIT)).toBe(12000);
    // 512x512 → 0.45: 0.02 × 0.45 × 500000
    expect(imageQuota(p, { model: 'dall-e-2', size: '512x512' }, UNIT)).toBe(4500);
  });

  it('validates dall-e sizes and rejects ×', () => {
    expect(validateImageSize('dall-e-3', '1024×1024')).toMatch(/×/);
    expect(validateImageSize('dall-e-2', '1024x1792')).toMatch(/256x256/);
    expect(validateImageSize('dall-e-3', '512x512')).toMatch(/1792x1024/);
    expect(validateImageSize('dall-e-3', '1792x1024')).toBeNull();
    expect(validateImageSize('dall-e-2', undefined)).toBeNull();
    expect(validateImageSize('flux-dev', '1536x640')).toBeNull();
  });
});

describe('per-call tasks (Midjourney, Suno)', () => {
  it('price × group ratio × QuotaPerUnit, with default and 0.1 fallbacks', async () => {
    expect(taskQuota(options, 'mj_imagine', 'default')).toEqual({ quota: 50000, modelPrice: 0.1, groupRatio: 1 });
    expect(taskQuota(options, 'suno_lyrics', 'default').quota).toBe(5000);
    expect(taskQuota(options, 'mj_inpaint', 'default').quota).toBe(0);
    await options.set('GroupRatio', JSON.stringify({ default: 1, vip: 2 }));
    expect(taskQuota(options, 'mj_describe', 'vip').quota).toBe(50000);
    // a saved ModelPrice without the action falls back to the compiled table, then to 0.1
    await options.set('ModelPrice', JSON.stringify({ mj_imagine: 0.2 }));
    expect(taskQuota(options, 'mj_imagine', 'default').quota).toBe(100000);
    expect(taskQuota(options, 'mj_upscale', 'default').quota).toBe(25000);
    expect(taskQuota(options, 'mj_unknown_action', 'default').quota).toBe(50000);
  });
});

describe('pre-consume', () => {
  it('reserves PreConsumedQuota tokens without max_tokens, prompt + max_tokens with it', async () => {
    const p = getPriceData(options, 'gpt-4o', 'default');
    expect(preConsumeQuota(p, 50, undefined, options)).toBe(625); // 500 × 1.25
    expect(preConsumeQuota(p, 50, 100, options)).toBe(187); // int(150 × 1.25)
    await options.set('PreConsumedQuota', '1000');
    expect(preConsumeQuota(p, 50, 0, options)).toBe(1250);
    expect(preConsumeQuota(getPriceData(options, 'dall-e-3', 'default'), 50, 100, options)).toBe(20000);
  });

  it('trusted shortcut: nothing reserved when balances exceed 100× the reservation', () => {
    expect(trustedReservation(625, 62501, { unlimited: true, remainQuota: 0 })).toBe(0);
    expect(trustedReservation(625, 62500, { unlimited: true, remainQuota: 0 })).toBe(625);
    expect(trustedReservation(625, 1e9, { unlimited: false, remainQuota: 62500 })).toBe(625);
    expect(trustedReservation(625, 1e9, { unlimited: false, remainQuota: 62501 })).toBe(0);
  });
});

describe('pricing page figures', () => {
  it('input = ratio × 2 × group, output = input × completion ratio (USD per 1M tokens)', () => {
    expect(pricePer1M(1.25, 4, 1)).toEqual({ input: 2.5, output: 10 });
    expect(pricePer1M(0.075, 4, 1.5)).toEqual({ input: 0.225, output: 0.9 });
  });
});

// Keeps the helper type honest: PriceData built by hand bills like one from the lookup.
describe('hand-built PriceData', () => {
  it('textQuota uses only the fields it is given', () => {
    const p: PriceData = {
      usePrice: false,
      modelPrice: -1,
      modelRatio: 2,
      completionRatio: 3,
      cacheRatio: 0.5,
      cacheCreationRatio: 1.25,
      groupRatio: 1,
    };
    // (10 − 4 + 4 × 0.5 + 8 × 1.25 + 5 × 3) × 2 = 33 × 2
    expect(
      textQuota(p, { prompt_tokens: 10, cached_tokens: 4, cache_creation_tokens: 8, completion_tokens: 5 }, UNIT),
    ).toBe(66);
  });
});
