// The pieces of a task's settlement at completion, alone: the units an upstream reports (Kling's
// final_unit_deduction string, Ark's usage.total_tokens) rounded up, unreadable ones absent; new-api's estimate at
// submit and the settled quota in exact arithmetic; the billing context read from our rows and from new-api's.
import { describe, expect, it } from 'vitest';
import { reportedUnits } from '../../src/relay/providers/task-units.js';
import { readKlingFetch } from '../../src/relay/providers/kling/adaptor.js';
import { readDoubaoFetch } from '../../src/relay/providers/doubao-video/adaptor.js';
import { ratioTaskEstimate, settledTaskQuota } from '../../src/services/pricing/index.js';
import { settleContextOf } from '../../src/services/tasks/settle.js';
import type { OptionStore } from '../../src/services/options.js';

function options(values: Record<string, unknown>): OptionStore {
  const get = (k: string) => (k in values ? JSON.stringify(values[k]) : '');
  return {
    get,
    json: <T>(k: string, d: T) => (k in values ? (values[k] as T) : d),
    num: (k: string, d: number) => (k in values ? Number(values[k]) : d),
    bool: () => false,
  } as unknown as OptionStore;
}

describe('reported units', () => {
  it('rounds a decimal string or a number up; anything else is absent', () => {
    expect(reportedUnits('2.5')).toBe(3);
    expect(reportedUnits('1')).toBe(1);
    expect(reportedUnits(' 7 ')).toBe(7);
    expect(reportedUnits(108900)).toBe(108900);
    expect(reportedUnits(0.2)).toBe(1);
    for (const bad of ['0', '-1', 'abc', '', '1e3', null, undefined, 0, -2, NaN, Infinity, {}, '9'.repeat(20)])
      expect(reportedUnits(bad), String(bad)).toBeUndefined();
  });

  it('Kling: final_unit_deduction of a succeeded task, none while it runs or when it fails', () => {
    const answer = (task_status: string, extra: Record<string, unknown> = {}) => ({
      code: 0,
      data: { task_id: 'k1', task_status, ...extra },
    });
    expect(readKlingFetch(200, answer('succeed', { final_unit_deduction: '2.5' }))![0].usedUnits).toBe(3);
    expect(readKlingFetch(200, answer('succeed', { final_unit_deduction: 'x' }))![0].usedUnits).toBeUndefined();
    expect(readKlingFetch(200, answer('succeed'))![0].usedUnits).toBeUndefined();
    expect(readKlingFetch(200, answer('processing', { final_unit_deduction: '2' }))![0].usedUnits).toBeUndefined();
    expect(readKlingFetch(200, answer('failed', { final_unit_deduction: '2' }))![0].usedUnits).toBeUndefined();
  });

  it('Ark: usage.total_tokens of a succeeded task with its video', () => {
    const answer = (status: string, usage: unknown) => ({
      id: 'cgt-1',
      status,
      content: { video_url: 'https://cdn.test/v.mp4' },
      usage,
    });
    expect(readDoubaoFetch(200, answer('succeeded', { total_tokens: 108900 }), 'cgt-1')![0].usedUnits).toBe(108900);
    expect(readDoubaoFetch(200, answer('succeeded', { total_tokens: 0 }), 'cgt-1')![0].usedUnits).toBeUndefined();
    expect(readDoubaoFetch(200, answer('succeeded', 'x'), 'cgt-1')![0].usedUnits).toBeUndefined();
    expect(readDoubaoFetch(200, answer('running', { total_tokens: 5 }), 'cgt-1')![0].usedUnits).toBeUndefined();
  });
});

describe('settlement arithmetic', () => {
  it("new-api's estimate: modelRatio / 2 × QuotaPerUnit × group × units × ratio; only for a ratio-only model", () => {
    const o = options({ ModelRatio: { r: 0.4, both: 1 }, ModelPrice: { both: 0.2 }, GroupRatio: { vip: 0.7 } });
    expect(ratioTaskEstimate(o, 'r', 'default', 1, 1_000_000)).toEqual({
      quota: 100_000,
      modelRatio: 0.4,
      groupRatio: 1,
    });
    // 0.2 × 500000 × 0.7 × 5 × 1.5
    expect(ratioTaskEstimate(o, 'r', 'vip', 5, 1_500_000)!.quota).toBe(525_000);
    expect(ratioTaskEstimate(o, 'both', 'default', 1, 1_000_000)).toBeNull();
    expect(ratioTaskEstimate(o, 'unset', 'default', 1, 1_000_000)).toBeNull();
  });

  it('units × modelRatio × group × others, exact and floored, at least 1 above 0', () => {
    expect(settledTaskQuota(3, 0.4, 1, 1_000_000)).toBe(1);
    // 0.1 × 3 is 0.30000000000000004 in floats: exact here
    expect(settledTaskQuota(10, 0.1, 3, 1_000_000)).toBe(3);
    expect(settledTaskQuota(108_900, 2, 1, 608_695)).toBe(132_573);
    expect(settledTaskQuota(1, 0.000001, 1, 1_000_000)).toBe(1);
    expect(settledTaskQuota(5, 1, 0, 1_000_000)).toBe(0);
    expect(settledTaskQuota(0, 1, 1, 1_000_000)).toBe(0);
  });

  it('the billing context: ours, new-api’s other_ratios, per call or none', () => {
    const ours = JSON.stringify({
      billing_context: { model_ratio: 0.4, group_ratio: 1, other_ratio_ppm: 1_500_000, per_call_billing: false },
    });
    expect(settleContextOf(ours)).toEqual({ modelRatio: 0.4, groupRatio: 1, otherPpm: 1_500_000 });
    const newApi = JSON.stringify({
      billing_context: {
        model_price: 0,
        model_ratio: 2,
        group_ratio: 0.5,
        other_ratios: { seconds: 5, size: 1, resolution: 1.5 },
        per_call_billing: false,
      },
    });
    expect(settleContextOf(newApi)).toEqual({ modelRatio: 2, groupRatio: 0.5, otherPpm: 7_500_000 });
    const perCall = JSON.stringify({ billing_context: { model_ratio: 2, group_ratio: 1, per_call_billing: true } });
    expect(settleContextOf(perCall)).toBeNull();
    expect(settleContextOf(JSON.stringify({ upstream_task_id: 'x' }))).toBeNull();
    expect(settleContextOf('not json')).toBeNull();
  });
});
