// Background re-reads of stale cache entries, in batches. Every cached token and user goes stale SYNC_FREQUENCY after
// it was read, and the ones loaded together (a busy gateway's first minute) go stale together: read one by one, a
// gateway with thousands of active tokens ran thousands of single-row queries on the event loop within a second,
// every minute. Collected for a few milliseconds, they are one query per BATCH keys.
const BATCH = 500;
const COLLECT_MS = 10;

export class BatchRefresh<K> {
  private keys = new Set<K>();
  private timer: NodeJS.Timeout | null = null;

  /**
   * `load` reads `keys` and stores what it found; on failure `failed` is told, so that the entries are tried again
   * on their next use.
   */
  constructor(
    private readonly load: (keys: K[]) => Promise<void>,
    private readonly failed: (keys: K[]) => void,
  ) {}

  add(key: K): void {
    this.keys.add(key);
    if (this.timer) return;
    this.timer = setTimeout(this.run, COLLECT_MS);
    this.timer.unref();
  }

  private readonly run = (): void => {
    this.timer = null;
    const all = [...this.keys];
    this.keys.clear();
    for (let i = 0; i < all.length; i += BATCH) {
      const chunk = all.slice(i, i + BATCH);
      this.load(chunk).catch(() => this.failed(chunk));
    }
  };
}
