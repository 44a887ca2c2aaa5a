// "The database cannot answer right now" as an error class of its own, so the
// layers above can tell an outage (retry later, answer 500 with Retry-After)
// from a bug or a constraint violation (which would fail the same way again).
// A database that answers but refuses writes (read-only after a failover, a
// full disk) is an outage too: the same write succeeds once it is over.

/** Why the database could not answer. */
export type UnavailableReason =
  /** No connection could be opened: refused, unreachable, or not within the connect deadline. */
  | "connect_failed"
  /** A statement got no answer within its deadline (client side: a frozen network path). */
  | "timeout"
  /** The server cancelled the statement at its statement_timeout (a lock wait, an overload). */
  | "statement_timeout"
  /** The connection broke while in use. */
  | "connection_lost"
  /** The server is shutting down, starting up, or out of connections. */
  | "server_unavailable"
  /** The server refuses writes: a read-only transaction or a standby (SQLSTATE 25006), as after a failover. */
  | "read_only"
  /** The server cannot write: out of disk space (SQLSTATE 53100). */
  | "disk_full";

/** The reasons that mean "the database answers but refuses writes" (readiness is off while they recur). */
export const WRITES_REFUSED: ReadonlySet<UnavailableReason> = new Set(["read_only", "disk_full"]);

/**
 * The database did not answer: nothing about the request itself is wrong, and
 * the same statement may succeed in a moment. Its message names the reason
 * only, never the connection string; the driver's error is kept as `cause`.
 */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
  readonly reason: UnavailableReason;

  constructor(reason: UnavailableReason, cause?: unknown) {
    super(`database unavailable (${reason})`, { cause });
    this.reason = reason;
  }
}

/** Network errors of a socket that never connected. */
const CONNECT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "ETIMEDOUT",
]);
/** Network errors of a socket that was connected. */
const LOST_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

type ErrorLike = { code?: unknown; message?: unknown; errors?: unknown };

/** What pg (and pg-pool) say when a connection attempt or a statement runs out of time or breaks. */
function fromMessage(message: string): UnavailableReason | null {
  if (message.includes("timeout exceeded when trying to connect")) return "connect_failed";
  if (message.includes("Connection terminated due to connection timeout")) return "connect_failed";
  if (message === "timeout expired") return "connect_failed"; // pg.Client's connectionTimeoutMillis
  if (message.includes("Query read timeout")) return "timeout";
  if (message.includes("Connection terminated")) return "connection_lost";
  if (message.includes("Client has encountered a connection error and is not queryable")) {
    return "connection_lost";
  }
  if (message.includes("Client was closed and is not queryable")) return "connection_lost";
  return null;
}

/** SQLSTATE classes and codes that mean "not now" rather than "not this". */
function fromSqlState(code: string): UnavailableReason | null {
  if (code.startsWith("08")) return "connection_lost"; // connection_exception
  if (code === "57014") return "statement_timeout"; // query_canceled (statement_timeout)
  if (code === "57P01" || code === "57P02" || code === "57P03") return "server_unavailable"; // shutdown, starting
  if (code === "53300" || code === "53400") return "server_unavailable"; // too many connections
  // The database is gone (dropped, or not restored yet): invalid_catalog_name on connect, database_dropped.
  // Like an unreachable host, an outage to retry, never a bug in the request (issue 53, item 9).
  if (code === "3D000" || code === "57P04") return "server_unavailable";
  if (code === "25006") return "read_only"; // read_only_sql_transaction (a standby, default_transaction_read_only)
  if (code === "53100") return "disk_full"; // disk_full
  return null;
}

/** Why `error` means the database is unavailable, or null when it means something else. */
export function unavailableReason(error: unknown): UnavailableReason | null {
  if (error instanceof DatabaseUnavailableError) return error.reason;
  if (typeof error !== "object" || error === null) return null;
  const { code, message, errors } = error as ErrorLike;
  if (typeof code === "string") {
    if (CONNECT_CODES.has(code)) return "connect_failed";
    if (LOST_CODES.has(code)) return "connection_lost";
    if (/^[0-9A-Z]{5}$/.test(code)) {
      const reason = fromSqlState(code);
      if (reason) return reason;
    }
  }
  // Every address refused (happy eyeballs): an AggregateError of connect errors.
  if (Array.isArray(errors) && errors.length > 0 && errors.every((inner) => unavailableReason(inner))) {
    return "connect_failed";
  }
  return typeof message === "string" ? fromMessage(message) : null;
}

/** `error` as a DatabaseUnavailableError when it is one in substance; otherwise unchanged. */
export function asUnavailable(error: unknown): unknown {
  if (error instanceof DatabaseUnavailableError) return error;
  const reason = unavailableReason(error);
  return reason === null ? error : new DatabaseUnavailableError(reason, error);
}

/** True for an error that says the database could not answer (now), whatever layer threw it. */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof DatabaseUnavailableError) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
