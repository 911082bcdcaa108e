// Dashboard aggregation of quota_data rows (new-api-compat.md §2.11, §5.8) into chart series.
export interface QuotaDataRow {
  model_name: string;
  created_at: number;
  token_used: number;
  count: number;
  quota: number;
  username?: string;
}

export type Granularity = 'hour' | 'day' | 'week';

export function normalizeGranularity(v: unknown): Granularity {
  return v === 'day' || v === 'week' ? v : 'hour';
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Start of the bucket (local time) holding `sec`; weeks start on Monday. */
export function bucketStart(sec: number, g: Granularity): number {
  const d = new Date(sec * 1000);
  d.setMinutes(0, 0, 0);
  if (g !== 'hour') d.setHours(0);
  if (g === 'week') d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
  return Math.floor(d.getTime() / 1000);
}

export function bucketLabel(sec: number, g: Granularity): string {
  const d = new Date(sec * 1000);
  const day = `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return g === 'hour' ? `${day} ${pad(d.getHours())}:00` : day;
}

export interface Totals {
  quota: number;
  tokens: number;
  count: number;
}

export function totals(rows: QuotaDataRow[]): Totals {
  return rows.reduce(
    (acc, r) => ({ quota: acc.quota + r.quota, tokens: acc.tokens + r.token_used, count: acc.count + r.count }),
    { quota: 0, tokens: 0, count: 0 },
  );
}

export interface Series {
  models: string[];
  /** One point per bucket: { label, time, [model]: value }. */
  points: Record<string, number | string>[];
}

/** Per-bucket per-model sums of `field`, buckets in time order, models by total descending. */
export function seriesByModel(rows: QuotaDataRow[], g: Granularity, field: 'quota' | 'count' | 'token_used'): Series {
  const byBucket = new Map<number, Map<string, number>>();
  const modelTotals = new Map<string, number>();
  for (const r of rows) {
    const b = bucketStart(r.created_at, g);
    const m = byBucket.get(b) ?? new Map<string, number>();
    m.set(r.model_name, (m.get(r.model_name) ?? 0) + r[field]);
    byBucket.set(b, m);
    modelTotals.set(r.model_name, (modelTotals.get(r.model_name) ?? 0) + r[field]);
  }
  const models = [...modelTotals.entries()].sort((a, b) => b[1] - a[1]).map(([m]) => m);
  const points = [...byBucket.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([time, m]) => {
      const p: Record<string, number | string> = { time, label: bucketLabel(time, g) };
      for (const model of models) p[model] = m.get(model) ?? 0;
      return p;
    });
  return { models, points };
}

/** Share of each model in `field` for the pie chart, largest first. */
export function modelShare(rows: QuotaDataRow[], field: 'quota' | 'count'): { name: string; value: number }[] {
  const m = new Map<string, number>();
  for (const r of rows) m.set(r.model_name, (m.get(r.model_name) ?? 0) + r[field]);
  return [...m.entries()]
    .map(([name, value]) => ({ name, value }))
    .filter((x) => x.value > 0)
    .sort((a, b) => b.value - a.value);
}

/** Largest per-bucket total of a series: the top of its stacked chart. */
export function seriesPeak(s: Series): number {
  let peak = 0;
  for (const p of s.points) {
    let t = 0;
    for (const m of s.models) t += Number(p[m]) || 0;
    peak = Math.max(peak, t);
  }
  return peak;
}
