// In-process caches with a fixed number of entries: a Map keeps insertion
// order, so the oldest entry is the first key.

/**
 * Sets `key` as the map's newest entry. When the map already holds
 * `maxEntries`, the oldest entry is dropped.
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, maxEntries: number): void {
  map.delete(key);
  if (map.size >= maxEntries) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}
