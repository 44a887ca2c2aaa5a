// The read replica's fallbacks as the metrics exposition counts them
// (sms_db_read_fallbacks_total{reason}), for the replica suites.
const REASONS = ["not_found_recent", "replica_error", "replica_behind"] as const;
export type ReadFallbacks = Record<(typeof REASONS)[number], number>;

export function readFallbacks(metricsText: string): ReadFallbacks {
  const counts: ReadFallbacks = { not_found_recent: 0, replica_error: 0, replica_behind: 0 };
  for (const match of metricsText.matchAll(/^sms_db_read_fallbacks_total\{reason="(\w+)"\} (\d+)/gm)) {
    const reason = REASONS.find((name) => name === match[1]);
    if (reason) counts[reason] = Number(match[2]);
  }
  return counts;
}
