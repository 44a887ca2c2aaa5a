// Keyset paging for the dashboard's lists: each page ends with the cursor of
// its last row, and the next page starts strictly after it, so a page never
// repeats or skips a row while new rows arrive at the top.

export type Page<T, C> = { items: T[]; next: C | null };

/** `rows` was read with `limit + 1`: the extra row only says there is more. */
export function pageOf<T, C>(rows: T[], limit: number, cursorOf: (row: T) => C): Page<T, C> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}
