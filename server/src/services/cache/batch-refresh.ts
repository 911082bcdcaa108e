// Background re-reads of stale cache entries, in batches. Every cached token and user goes stale SYNC_FREQUENCY after
// it was read, and the ones loaded together (a busy gateway's first minute) go stale together: read one by one, a
// gateway with thousands of active tokens ran thousands of single-row queries on the event loop within a second,
// every minute. Collected for a few milliseconds, they are one query per BATCH keys.
const BATCH = 500;
const COLLECT_MS = 10;

/** A cache entry as the refresh sees it: marked while its re-read is queued or running. */
export interface RefreshableEntry {
  refreshing?: boolean;
}

export class BatchRefresh<K, V> {
  private keys = new Set<K>();
  private timer: NodeJS.Timeout | null = null;

  /**
   * `read` returns what it found of `keys` (a key it did not find: gone); `store` puts a re-read value (null: gone)
   * into `entries`. An entry replaced or dropped meanwhile (a published change) is left as it is.
   */
  constructor(
    private readonly entries: Map<K, RefreshableEntry>,
    private readonly read: (keys: K[]) => Promise<Map<K, V>>,
    private readonly store: (key: K, value: V | null) => void,
  ) {}

  /** Queues a re-read of a stale entry, once until it is done. */
  stale(key: K, entry: RefreshableEntry): void {
    if (entry.refreshing) return;
    entry.refreshing = true;
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
      this.read(chunk).then(
        (found) => {
          for (const key of chunk) if (this.entries.get(key)?.refreshing) this.store(key, found.get(key) ?? null);
        },
        () => {
          // tried again at the entry's next use
          for (const key of chunk) {
            const e = this.entries.get(key);
            if (e) e.refreshing = false;
          }
        },
      );
    }
  };
}
