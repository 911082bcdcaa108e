// Relay counters and histograms kept as plain numbers per label set, and exposed through the prom-client registry
// when /metrics is scraped. prom-client's own Counter and Histogram validate and hash their labels on every update;
// at one request's handful of updates that cost about as much as the rest of the relay's work on a cached request
// (docs/perf/metrics.md), so the updates the relay makes per request go through these instead. The exposition
// (names, types, labels, cumulative `le` buckets, `_sum` and `_count`) is prom-client's, from the registry.
// prom-client's registry takes any object with name, help, type and get() (services/metrics.ts registers them).

const SEP = '\u0001';

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

abstract class Tally<L extends string> {
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';

  constructor(
    readonly name: string,
    readonly help: string,
    protected readonly labelNames: readonly L[],
  ) {}

  protected keyOf(labels: Record<L, string>): string {
    let key = '';
    for (const n of this.labelNames) key += labels[n] + SEP;
    return key;
  }

  abstract get(): { name: string; help: string; type: string; aggregator: string; values: MetricValue[] };
  abstract reset(): void;
}

/** A counter per label set: inc() is a string join and a map update. */
export class TallyCounter<L extends string> extends Tally<L> {
  readonly type = 'counter';
  private readonly entries = new Map<string, { labels: Record<L, string>; value: number }>();

  constructor(opts: { name: string; help: string; labelNames: readonly L[] }) {
    super(opts.name, opts.help, opts.labelNames);
  }

  inc(labels: Record<L, string>, value = 1): void {
    const key = this.keyOf(labels);
    const e = this.entries.get(key);
    if (e) e.value += value;
    else this.entries.set(key, { labels: { ...labels }, value });
  }

  get() {
    const values = [...this.entries.values()].map((e) => ({ labels: e.labels, value: e.value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.entries.clear();
  }
}

/** A histogram per label set: observe() finds the bucket and bumps three numbers. */
export class TallyHistogram<L extends string> extends Tally<L> {
  readonly type = 'histogram';
  private readonly entries = new Map<
    string,
    { labels: Record<L, string>; counts: number[]; sum: number; count: number }
  >();

  constructor(opts: { name: string; help: string; labelNames: readonly L[]; buckets: readonly number[] }) {
    super(opts.name, opts.help, opts.labelNames);
    this.buckets = [...opts.buckets].sort((a, b) => a - b);
  }

  private readonly buckets: number[];

  observe(labels: Record<L, string>, value: number): void {
    const key = this.keyOf(labels);
    let e = this.entries.get(key);
    if (!e) {
      e = { labels: { ...labels }, counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.entries.set(key, e);
    }
    const i = this.buckets.findIndex((b) => value <= b);
    if (i >= 0) e.counts[i]!++;
    e.sum += value;
    e.count++;
  }

  get() {
    const values: MetricValue[] = [];
    for (const e of this.entries.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += e.counts[i]!;
        values.push({ labels: { ...e.labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...e.labels, le: '+Inf' }, value: e.count, metricName: `${this.name}_bucket` });
      values.push({ labels: e.labels, value: e.sum, metricName: `${this.name}_sum` });
      values.push({ labels: e.labels, value: e.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.entries.clear();
  }
}
