// Size bounds for in-process maps keyed by traffic (client addresses, users, …): an age bound alone lets a burst of
// distinct keys (many IPv6 addresses) grow a map without limit until the next sweep.

/** Deletes the oldest-inserted entries until the map holds fewer than `max` (room for one more). */
export function trimOldest<K, V>(map: Map<K, V>, max: number): void {
  if (map.size < max) return;
  for (const key of map.keys()) {
    map.delete(key);
    if (map.size < max) return;
  }
}
