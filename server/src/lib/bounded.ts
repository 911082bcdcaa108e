// Size bounds for in-process maps keyed by traffic (client addresses, users, model names, SQL texts, …): an age bound
// alone lets a burst of distinct keys (many IPv6 addresses) grow a map without limit until the next sweep.

/**
 * Deletes the oldest-inserted entries until the map holds fewer than `max` (room for one more); `onDrop` sees each
 * one deleted (to close what it holds).
 */
export function trimOldest<K, V>(map: Map<K, V>, max: number, onDrop?: (value: V, key: K) => void): void {
  if (map.size < max) return;
  for (const [key, value] of map) {
    map.delete(key);
    onDrop?.(value, key);
    if (map.size < max) return;
  }
}

/**
 * A map that holds at most `max` entries: adding a new key past the bound forgets the oldest-inserted ones first.
 * For memos whose keys come from traffic or configuration (price texts, base URLs, prepared statements): reads are
 * Map's own get, so the hot path pays nothing for the bound.
 */
export class CappedMap<K, V> extends Map<K, V> {
  constructor(
    readonly max: number,
    private readonly onDrop?: (value: V, key: K) => void,
  ) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key)) trimOldest(this, this.max, this.onDrop);
    return super.set(key, value);
  }
}
