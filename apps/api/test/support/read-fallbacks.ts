// The read replica's fallbacks as the metrics exposition counts them
// (sms_db_read_fallbacks_total{reason}), for the replica suites.
export type ReadFallbacks = Record<"not_found_recent" | "replica_error", number>;

export function readFallbacks(metricsText: string): ReadFallbacks {
  const counts: ReadFallbacks = { not_found_recent: 0, replica_error: 0 };
  for (const match of metricsText.matchAll(/^sms_db_read_fallbacks_total\{reason="(\w+)"\} (\d+)/gm)) {
    if (match[1] === "not_found_recent" || match[1] === "replica_error") counts[match[1]] = Number(match[2]);
  }
  return counts;
}
