// How many lines a request header arrived in. The Fetch API joins repeated
// header lines into one value ("k, k"), so `headers.get()` cannot tell two
// `Idempotency-Key` lines from one key that contains ", " (a key may hold any
// characters). Deno keeps the lines apart in the Headers object's header list
// (a field keyed by a symbol described "header list", filled once the headers
// are read); there is no public API for it. A value without a comma is one
// line, so the list is consulted only for values that contain one. Where the
// list cannot be read (another runtime), a value counts as one line: the
// server's start-up check (assertHeaderLinesReadable) makes sure the pinned
// Deno is not such a runtime, and gateway.e2e exercises the request path.

/** The header list of `headers` as [name, value] pairs, one per line received; null if this runtime hides it. */
function headerList(headers: Headers): Array<[string, string]> | null {
  // Reading an entry fills a request's list, which Deno fetches lazily.
  for (const _ of headers) break;
  for (const symbol of Object.getOwnPropertySymbols(headers)) {
    if (symbol.description !== "header list") continue;
    const list = (headers as unknown as Record<symbol, unknown>)[symbol];
    if (Array.isArray(list)) return list as Array<[string, string]>;
  }
  return null;
}

/** How many lines header `name` arrived in (0 when absent). */
export function headerLineCount(headers: Headers, name: string): number {
  const value = headers.get(name);
  if (value === null) return 0;
  if (!value.includes(",")) return 1;
  const list = headerList(headers);
  if (!list) return 1;
  const lower = name.toLowerCase();
  return list.filter(([line]) => line.toLowerCase() === lower).length;
}

/** Throws when this runtime does not let headerLineCount see repeated lines (a Deno upgrade changed it). */
export function assertHeaderLinesReadable(): void {
  const probe = new Headers([
    ["Idempotency-Key", "a"],
    ["idempotency-key", "b"],
  ]);
  if (headerLineCount(probe, "Idempotency-Key") !== 2) {
    throw new Error(
      "This runtime hides repeated header lines: duplicate Idempotency-Key/Authorization headers could not be refused (apps/api/src/http/header-lines.ts).",
    );
  }
}
