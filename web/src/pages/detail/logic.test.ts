import { describe, expect, it } from 'vitest';
import {
  bucketStart,
  modelShare,
  normalizeGranularity,
  seriesByModel,
  seriesPeak,
  totals,
  type QuotaDataRow,
} from './logic.js';

const at = (y: number, m: number, d: number, h: number) => Math.floor(new Date(y, m - 1, d, h).getTime() / 1000);
const rows: QuotaDataRow[] = [
  { model_name: 'a', created_at: at(2030, 1, 7, 10), token_used: 100, count: 2, quota: 50 },
  { model_name: 'b', created_at: at(2030, 1, 7, 10), token_used: 10, count: 1, quota: 500 },
  { model_name: 'a', created_at: at(2030, 1, 8, 11), token_used: 5, count: 1, quota: 5 },
];

describe('dashboard aggregation', () => {
  it('sums totals', () => {
    expect(totals(rows)).toEqual({ quota: 555, tokens: 115, count: 4 });
  });
  it('buckets by hour, day and Monday-started week', () => {
    expect(bucketStart(at(2030, 1, 7, 10) + 1800, 'hour')).toBe(at(2030, 1, 7, 10));
    expect(bucketStart(at(2030, 1, 8, 11), 'day')).toBe(at(2030, 1, 8, 0));
    // 2030-01-10 is a Thursday; its week starts Monday 2030-01-07
    expect(bucketStart(at(2030, 1, 10, 5), 'week')).toBe(at(2030, 1, 7, 0));
    expect(normalizeGranularity('month')).toBe('hour');
  });
  it('builds per-model series ordered by time, models by total', () => {
    const s = seriesByModel(rows, 'day', 'quota');
    expect(s.models).toEqual(['b', 'a']);
    expect(s.points.map((p) => [p.a, p.b])).toEqual([
      [50, 500],
      [5, 0],
    ]);
    const w = seriesByModel(rows, 'week', 'count');
    expect(w.points).toHaveLength(1);
    expect(w.points[0]).toMatchObject({ a: 3, b: 1 });
  });
  it('computes model share', () => {
    expect(modelShare(rows, 'count')).toEqual([
      { name: 'a', value: 3 },
      { name: 'b', value: 1 },
    ]);
  });
  it('finds the top of the stacked chart', () => {
    expect(seriesPeak(seriesByModel(rows, 'hour', 'quota'))).toBe(550);
    expect(seriesPeak(seriesByModel(rows, 'week', 'quota'))).toBe(555);
    expect(seriesPeak(seriesByModel([], 'hour', 'quota'))).toBe(0);
  });
});
