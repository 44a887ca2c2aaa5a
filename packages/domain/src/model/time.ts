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

// The days a log can be filtered by are wire vocabulary (@sms/contract).
import { FILTER_DAYS } from "@sms/contract";

export { FILTER_DAYS, isFilterDay } from "@sms/contract";

/** How a refused day filter is worded, naming the field. */
export const filterDayRule = (field: string) =>
  `The “${field}” filter must be a day (YYYY-MM-DD) from ${FILTER_DAYS.first} to ${FILTER_DAYS.last}.`;
