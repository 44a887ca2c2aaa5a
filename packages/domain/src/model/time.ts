// Time arithmetic shared by the use cases. All times are UTC.

export const MINUTE_MS = 60_000;
export const TEN_MINUTES_MS = 600_000;
export const DAY_MS = 86_400_000;

/** "2026-11-22T02:33:10Z": ISO 8601 UTC, second precision, Z suffix. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function truncateToSecond(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

export function startOfUtcDay(date: Date): Date {
  return new Date(Math.floor(date.getTime() / DAY_MS) * DAY_MS);
}

export function nextUtcMidnight(date: Date): Date {
  return new Date(startOfUtcDay(date).getTime() + DAY_MS);
}

/** The fixed UTC minute `now` falls in. */
export function startOfUtcMinute(date: Date): Date {
  return new Date(Math.floor(date.getTime() / MINUTE_MS) * MINUTE_MS);
}

/**
 * The days a log can be filtered by, inclusive: a filter "to" a day reads up to the next midnight, and the day
 * after 9999-12-30 is the last one a timestamp (and a four-digit year) can name.
 */
export const FILTER_DAYS = { first: "1970-01-01", last: "9999-12-30" } as const;

/** A real calendar day, YYYY-MM-DD, within FILTER_DAYS. */
export function isFilterDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || value < FILTER_DAYS.first || value > FILTER_DAYS.last)
    return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** How a refused day filter is worded, naming the field. */
export const filterDayRule = (field: string) =>
  `The “${field}” filter must be a day (YYYY-MM-DD) from ${FILTER_DAYS.first} to ${FILTER_DAYS.last}.`;
