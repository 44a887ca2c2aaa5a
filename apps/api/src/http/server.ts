// The HTTP listeners (public port and internal listener). Requests are parsed
// and answered by Deno's own HTTP server, the same native code as Deno.serve,
// but connections are accepted here, one at a time, because Deno.serve offers
// none of what a public service needs (docs/operations.md#connections):
//
//   - a fair cap on open connections: at most MAX_CONNECTIONS in all and
//     MAX_CONNECTIONS_PER_PEER from one address (an IPv6 /48). At either cap a
//     new connection first takes the place of the oldest idle one, or of one
//     whose request still waits for its body (issue 53, G1), (of its own
//     address at the per-peer cap; of the address holding the most at the
//     global cap), so a flood of silent connections only ever displaces
//     itself. When nothing is idle, a few connections over the cap are still
//     read, to answer /healthz and /readyz (never shed) and give everything
//     else a 503 envelope; beyond those, a new connection gets the 503 at once
//     and is closed;
//   - an accept loop that survives running out of file descriptors (Deno's
//     own loop ends the server on EMFILE): it backs off and tries again.
//     (Deno itself raises the soft RLIMIT_NOFILE to the hard limit at start-up;
//     reading the limit back needs --allow-all, so the cap is configured, not
//     derived: see docs/operations.md#connections);
//   - at most MAX_UNFINISHED_BODIES_PER_PEER requests of one address waiting
//     for their bodies: one more closes that address's oldest;
//   - deadlines: a new connection must deliver its request headers within
//     HTTP_HEADERS_TIMEOUT_SECONDS, a keep-alive connection with nothing in
//     flight (or a response its client does not take) is closed after
//     HTTP_IDLE_TIMEOUT_SECONDS, and a body must arrive within
//     HTTP_BODY_TIMEOUT_SECONDS, never HTTP_BODY_READ_TIMEOUT_SECONDS without a
//     byte, at HTTP_BODY_MIN_BYTES_PER_SECOND after that (enforced by
//     read-body.ts, from the sweep);
//   - closing a connection after a response whose request body was not read
//     to its end (too large, too slow, or ignored by the route): Deno would
//     otherwise keep draining an endless body forever;
//   - a drain for shutdown (a connection with nothing in flight is closed
//     after DRAIN_IDLE_GRACE_MS, so a request already sent on it is answered,
//     with `Connection: close`, rather than reset), and a hard close for its
//     deadline.
//
// Each accepted connection is handed to Deno's internal serveHttpOnConnection
// (`Deno[Deno.internal]`, the per-connection form of Deno.serve), so every
// request takes exactly Deno.serve's path; the cost is about 1.5 µs per request
// and 15 µs per new connection (bench/README.md#http-server). It is not a public API: start-up fails
// loudly if a Deno upgrade removes it, and the e2e tests (connections.e2e)
// exercise every behaviour above against the pinned Deno.
import { newId } from "@sms/crypto";
import { ApiError } from "../contract/api-error.ts";
import { INTERNAL_ERROR_MESSAGE, REFUSAL_MESSAGES } from "../contract/wording.ts";
import type { AppLogger } from "../logger.ts";
import { connectionSubject } from "./client-address.ts";
import { errorResponse } from "./errors.ts";
import type { Handler } from "./gateway.ts";
import { assertHeaderLinesReadable } from "./header-lines.ts";
import {
  bodyDeclared,
  bodyFramingFailed,
  bodyLeftUnread,
  cancelLateBodies,
  setBodyTerms,
} from "./read-body.ts";

/** The part of an AbortSignal Deno's per-connection server uses: it registers one "abort" listener. */
type CancelHook = { addEventListener(type: "abort", listener: () => void): void };

type ServeHttpOnConnection = (
  connection: Deno.Conn,
  signal: CancelHook,
  handler: (request: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>,
  onError: (error: unknown) => Response,
  onListen: () => void,
) => { finished: Promise<void> };

function serveHttpOnConnection(): ServeHttpOnConnection {
  const internalKey = (Deno as unknown as { internal?: symbol }).internal;
  const internals = internalKey
    ? ((Deno as unknown as Record<symbol, { serveHttpOnConnection?: unknown } | undefined>)[internalKey] ??
      {})
    : {};
  if (typeof internals.serveHttpOnConnection !== "function") {
    throw new Error(
      `This Deno (${Deno.version.deno}) has no serveHttpOnConnection: the HTTP server needs the pinned Deno version (apps/api/package.json).`,
    );
  }
  return internals.serveHttpOnConnection as ServeHttpOnConnection;
}

/** After a response that must end its connection, how long the client has to read it before the socket closes. */
const LINGER_MS = 250;
/**
 * At the drain, how long a connection with nothing in flight is kept open in
 * case a request is already on its way (sent just before the signal, not yet
 * read): such a request is answered with `Connection: close` instead of the
 * connection being reset under it (issue 27: 4 of 24 requests sent 6-14 ms
 * before SIGTERM got ECONNRESET).
 */
export const DRAIN_IDLE_GRACE_MS = 1000;
/** At most one warning line per kind (shed connections, failed accepts) per this interval. */
const WARN_INTERVAL_MS = 10_000;
/** The internal listener's own cap: it serves a few tools, never the public. */
export const INTERNAL_MAX_CONNECTIONS = 32;
/** Routes a connection over the cap is still served for: an orchestrator's probes must not see the flood. */
const NEVER_SHED_PATHS = new Set(["/healthz", "/readyz"]);

/** How many connections over the cap are read to answer them (health probes): a share of the cap, at least 4. */
export function overflowReserve(maxConnections: number): number {
  return Math.max(4, Math.ceil(maxConnections / 32));
}

export type ServeOptions = {
  /** Names the listener in logs ("public", "internal"). */
  name: string;
  hostname: string;
  port: number;
  handler: Handler;
  maxConnections: number;
  /** Open connections from one address (an IPv6 /48); at most maxConnections. */
  maxConnectionsPerPeer: number;
  /** Requests from one address whose body has not arrived yet; a new one closes that address's oldest. */
  maxUnfinishedBodiesPerPeer: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** After the headers, the most time without a body byte, and the grace before the minimum rate applies. */
  bodyReadTimeoutMs: number;
  /** The least average body rate once bodyReadTimeoutMs has passed (0: none). */
  bodyMinBytesPerSecond: number;
  idleTimeoutMs: number;
  logger: AppLogger;
};

export type HttpServer = {
  addr: Deno.NetAddr;
  /** Connections open right now. */
  connections(): number;
  /**
   * Stops accepting, closes connections with nothing in flight now and the
   * others once their response is sent; resolves when none is left.
   */
  drain(): Promise<void>;
  /** Closes every remaining connection at once; returns how many there were. */
  closeAll(): number;
};

type Connection = {
  /** The peer's address as the per-peer cap counts it (connectionSubject: an IPv6 /48). */
  peer: string;
  /** Accepted over the cap: it answers one request (health routes, or a 503) and closes. */
  overflow: boolean;
  /** Counted in `open` and its peer's set (until it is closing). */
  counted: boolean;
  cancel: (() => void) | null;
  /** Requests whose response has not been sent yet. */
  inFlight: number;
  /** No request has arrived yet: the headers deadline applies, not the idle one. */
  fresh: boolean;
  /** performance.now() when the connection last had nothing in flight. */
  idleSince: number;
  /** performance.now() when a request's headers arrived whose declared body has not arrived yet; else null. */
  bodySince: number | null;
  /** performance.now() when a response was handed to Deno and is not yet taken by the client. */
  sendingSince: number | null;
  /** Close once nothing is in flight (an unread body, or the drain). */
  closeWhenIdle: boolean;
  closing: boolean;
};

/** Counts events and logs them at most once per WARN_INTERVAL_MS (the first at once). */
function throttledWarning(logger: AppLogger, message: string, fields: Record<string, unknown>) {
  let lastLoggedAt = Number.NEGATIVE_INFINITY;
  let pending = 0;
  let detail: Record<string, unknown> = {};
  const flush = (now: number) => {
    if (pending === 0 || now - lastLoggedAt < WARN_INTERVAL_MS) return;
    logger.warn({ ...fields, ...detail, count: pending }, message);
    lastLoggedAt = now;
    pending = 0;
  };
  return {
    record(extra: Record<string, unknown> = {}) {
      pending += 1;
      detail = extra;
      flush(performance.now());
    },
    flush,
  };
}

const encoder = new TextEncoder();

/** The 503 a request on a connection over the cap gets (anything but the health routes). */
function shedError(): ApiError {
  return new ApiError("too_many_connections", REFUSAL_MESSAGES.too_many_connections, { "Retry-After": "1" });
}

/** The whole answer to a connection over the cap that is not read at all, written before it is closed. */
function shedResponse(): Uint8Array {
  const requestId = newId("req");
  const body = JSON.stringify({
    error: {
      code: "too_many_connections",
      message: REFUSAL_MESSAGES.too_many_connections,
      request_id: requestId,
    },
  });
  return encoder.encode(
    `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${encoder.encode(body).byteLength}\r\nRetry-After: 1\r\nX-Request-Id: ${requestId}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A health route: answered even on a connection over the cap. */
function neverShed(request: Request): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  const path = request.url.slice(request.url.indexOf("/", request.url.indexOf("//") + 2));
  return NEVER_SHED_PATHS.has(path.split("?")[0] ?? "");
}

/**
 * Deno writes `connection: close` itself after a request that asked for it
 * (`Connection: close`) and after a body it failed (malformed chunked
 * framing), whatever the response says: the server's own header would be a
 * second one (issue 53, item 8).
 */
function runtimeAnnouncesClose(request: Request): boolean {
  if (bodyFramingFailed(request)) return true;
  const tokens = request.headers.get("connection");
  return tokens !== null && tokens.split(",").some((token) => token.trim().toLowerCase() === "close");
}

function isListenerClosed(error: unknown): boolean {
  return error instanceof Deno.errors.BadResource || error instanceof Deno.errors.Interrupted;
}

export function serveHttp(options: ServeOptions): HttpServer {
  const serveConnection = serveHttpOnConnection();
  assertHeaderLinesReadable();
  const { logger } = options;
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const connections = new Set<Connection>();
  /** Connections counted against the caps, by peer. */
  const peers = new Map<string, Set<Connection>>();
  let open = 0;
  const overflow = new Set<Connection>();
  const reserve = overflowReserve(options.maxConnections);
  const perPeer = Math.min(options.maxConnectionsPerPeer, options.maxConnections);
  const shed = throttledWarning(
    logger,
    "connection limit reached: idle connections are closed for new ones, or new ones refused",
    {
      listener: options.name,
      max_connections: options.maxConnections,
      max_connections_per_peer: perPeer,
    },
  );
  const acceptFailures = throttledWarning(logger, "accepting a connection failed; retrying", {
    listener: options.name,
  });
  let draining = false;
  let drained: (() => void) | undefined;

  /** The connection no longer counts against the caps (it is closing, or gone). */
  function release(connection: Connection) {
    overflow.delete(connection);
    if (!connection.counted) return;
    connection.counted = false;
    open -= 1;
    const own = peers.get(connection.peer);
    own?.delete(connection);
    if (own?.size === 0) peers.delete(connection.peer);
  }

  function close(connection: Connection) {
    if (connection.closing || !connection.cancel) return;
    release(connection);
    connection.closing = true;
    try {
      connection.cancel();
    } catch {
      // Already closed by the peer: nothing left to cancel.
    }
  }

  function afterResponse(connection: Connection) {
    connection.inFlight -= 1;
    if (connection.inFlight > 0) return;
    connection.sendingSince = null;
    connection.idleSince = performance.now();
    if (connection.closeWhenIdle || draining) setTimeout(() => close(connection), LINGER_MS);
  }

  function forget(connection: Connection) {
    release(connection);
    connections.delete(connection);
    connection.closing = true;
    if (draining && connections.size === 0) drained?.();
  }

  const onError = (error: unknown) => {
    logger.error({ listener: options.name, err: error }, "request handler failed");
    const requestId = newId("req");
    const response = errorResponse(new ApiError("internal_error", INTERNAL_ERROR_MESSAGE), requestId);
    response.headers.set("X-Content-Type-Options", "nosniff");
    return response;
  };

  function serve(conn: Deno.Conn, peer: string, overCap: boolean) {
    const connection: Connection = {
      peer,
      overflow: overCap,
      counted: !overCap,
      cancel: null,
      inFlight: 0,
      fresh: true,
      idleSince: performance.now(),
      bodySince: null,
      sendingSince: null,
      closeWhenIdle: false,
      closing: false,
    };
    connections.add(connection);
    if (overCap) {
      overflow.add(connection);
      connection.closeWhenIdle = true;
    } else {
      open += 1;
      const own = peers.get(peer) ?? new Set<Connection>();
      own.add(connection);
      peers.set(peer, own);
    }
    const remoteAddress = conn.remoteAddr.transport === "tcp" ? conn.remoteAddr.hostname : "127.0.0.1";
    const hook: CancelHook = {
      addEventListener: (_type, listener) => {
        connection.cancel = listener;
      },
    };
    const handle = async (request: Request, info: Deno.ServeHandlerInfo): Promise<Response> => {
      connection.inFlight += 1;
      connection.fresh = false;
      const settle = () => afterResponse(connection);
      info.completed.then(settle, settle);
      const startedAt = performance.now();
      if (!connection.overflow && bodyDeclared(request)) awaitBody(connection, startedAt);
      setBodyTerms(request, {
        deadline: startedAt + options.bodyTimeoutMs,
        startedAt,
        readTimeoutMs: options.bodyReadTimeoutMs,
        minBytesPerSecond: options.bodyMinBytesPerSecond,
        onSettled: () => {
          connection.bodySince = null;
        },
      });
      // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (the gateway answers it, in the envelope).
      const hostMissing = !request.headers.has("host");
      if (hostMissing) connection.closeWhenIdle = true;
      const response =
        connection.overflow && !neverShed(request)
          ? errorResponse(shedError(), newId("req"))
          : await options.handler(request, { remoteAddress, ...(hostMissing ? { hostMissing } : {}) });
      connection.sendingSince = performance.now();
      connection.bodySince = null;
      if (bodyLeftUnread(request)) {
        connection.closeWhenIdle = true;
        // A body left unread is given up here, so that the runtime neither keeps
        // reading it nor announces the close itself (it says `connection: close`
        // for a body still open, and the answer carried the header twice).
        if (request.body && !request.body.locked) request.body.cancel().catch(() => {});
      }
      try {
        // Every response, whoever made it (the gateway sets it too): issue 25, L7.
        response.headers.set("X-Content-Type-Options", "nosniff");
        if ((connection.closeWhenIdle || draining) && !runtimeAnnouncesClose(request)) {
          response.headers.set("Connection", "close");
        }
      } catch {
        // Immutable headers: the connection closes all the same.
      }
      return response;
    };
    try {
      const server = serveConnection(conn, hook, handle, onError, () => {});
      server.finished.then(
        () => forget(connection),
        () => forget(connection),
      );
    } catch (error) {
      logger.error({ listener: options.name, err: error }, "serving a connection failed");
      forget(connection);
      try {
        conn.close();
      } catch {
        // Already closed.
      }
    }
  }

  /**
   * When a connection became one the caps may close for a newcomer: since it
   * last had nothing in flight (idle, or no request yet), or since its request's
   * headers arrived without the body they declare; null when it is serving.
   */
  function sheddableSince(connection: Connection): number | null {
    if (connection.closing) return null;
    if (connection.inFlight === 0) return connection.idleSince;
    return connection.bodySince;
  }

  /** The connection among `candidates` that has been sheddable longest, and how many are sheddable. */
  function oldestSheddable(candidates: Iterable<Connection>): { victim: Connection | null; count: number } {
    let victim: Connection | null = null;
    let oldest = Number.POSITIVE_INFINITY;
    let count = 0;
    for (const connection of candidates) {
      const since = sheddableSince(connection);
      if (since === null) continue;
      count += 1;
      if (since < oldest) {
        oldest = since;
        victim = connection;
      }
    }
    return { victim, count };
  }

  /**
   * At the global cap: the oldest sheddable connection (idle, or waiting for
   * its body) of the address holding the most sheddable ones, the flood's
   * first; between addresses holding as many, the one whose oldest is oldest.
   */
  function globalVictim(): Connection | null {
    let best: Connection | null = null;
    let bestCount = 0;
    for (const own of peers.values()) {
      const { victim, count } = oldestSheddable(own);
      if (!victim) continue;
      const better =
        count > bestCount ||
        (count === bestCount && (sheddableSince(victim) ?? 0) < (best ? (sheddableSince(best) ?? 0) : 0));
      if (!best || better) {
        best = victim;
        bestCount = count;
      }
    }
    return best;
  }

  /**
   * A request on `connection` now waits for its body. At the per-peer cap on
   * unfinished bodies, its address's oldest connection still waiting for one
   * is closed: a slow sender holds at most that many, and only its own.
   */
  function awaitBody(connection: Connection, now: number) {
    connection.bodySince = now;
    const own = peers.get(connection.peer);
    if (!own) return;
    let waiting = 0;
    let oldest: Connection | null = null;
    for (const other of own) {
      if (other.closing || other.bodySince === null) continue;
      waiting += 1;
      if (other !== connection && (!oldest || other.bodySince < (oldest.bodySince ?? now))) oldest = other;
    }
    if (waiting > options.maxUnfinishedBodiesPerPeer && oldest) {
      shed.record({ action: "closed_unfinished_body" });
      close(oldest);
    }
  }

  /** Admits a new connection under the caps, making room by closing an idle one if it must. */
  function admit(conn: Deno.Conn) {
    const peer = connectionSubject(
      conn.remoteAddr.transport === "tcp" ? conn.remoteAddr.hostname : "127.0.0.1",
    );
    const own = peers.get(peer);
    let full = false;
    let victim: Connection | null = null;
    if (own && own.size >= perPeer) {
      full = true;
      victim = oldestSheddable(own).victim;
    } else if (open >= options.maxConnections) {
      full = true;
      victim = globalVictim();
    }
    if (!full) return serve(conn, peer, false);
    if (victim) {
      shed.record({ action: victim.inFlight === 0 ? "closed_idle" : "closed_unfinished_body" });
      close(victim);
      return serve(conn, peer, false);
    }
    if (overflow.size < reserve) {
      shed.record({ action: "health_only" });
      return serve(conn, peer, true);
    }
    refuse(conn);
  }

  function refuse(conn: Deno.Conn) {
    shed.record({ action: "refused" });
    conn
      .write(shedResponse())
      .catch(() => 0)
      .finally(() => {
        try {
          conn.close();
        } catch {
          // Already closed.
        }
      });
  }

  async function acceptLoop() {
    let backoffMs = 10;
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch (error) {
        if (draining || isListenerClosed(error)) return;
        // EMFILE/ENFILE and friends: the process lives on; the connection
        // waits in the kernel's backlog until descriptors are free again.
        acceptFailures.record({ reason: (error as Error).message });
        await new Promise((resolve) => setTimeout(resolve, backoffMs));
        backoffMs = Math.min(backoffMs * 2, 1000);
        continue;
      }
      backoffMs = 10;
      if (draining) {
        conn.close();
        return;
      }
      admit(conn);
    }
  }

  function sweep() {
    const now = performance.now();
    for (const connection of connections) {
      if (connection.closing) continue;
      if (connection.inFlight > 0) {
        // A client that does not take its response holds the connection like an idle one.
        const since = connection.sendingSince;
        if (since !== null && now - since >= options.idleTimeoutMs) close(connection);
        continue;
      }
      const limit = connection.fresh ? options.headersTimeoutMs : options.idleTimeoutMs;
      if (now - connection.idleSince >= limit) close(connection);
    }
    cancelLateBodies(now);
    shed.flush(now);
    acceptFailures.flush(now);
  }
  const sweepEveryMs = Math.min(
    1000,
    Math.max(50, Math.min(options.headersTimeoutMs, options.idleTimeoutMs) / 4),
  );
  const sweeper = setInterval(sweep, sweepEveryMs);
  Deno.unrefTimer(sweeper);

  void acceptLoop().catch((error) =>
    logger.error({ listener: options.name, err: error }, "accept loop failed"),
  );

  return {
    addr: listener.addr as Deno.NetAddr,
    connections: () => connections.size,
    drain() {
      if (!draining) {
        draining = true;
        try {
          listener.close();
        } catch {
          // Already closed.
        }
        for (const connection of connections) {
          connection.closeWhenIdle = true;
          if (connection.inFlight > 0) continue;
          setTimeout(() => {
            if (connection.inFlight === 0) close(connection);
          }, DRAIN_IDLE_GRACE_MS);
        }
      }
      if (connections.size === 0) {
        clearInterval(sweeper);
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        drained = () => {
          clearInterval(sweeper);
          resolve();
        };
      });
    },
    closeAll() {
      const open = connections.size;
      for (const connection of connections) close(connection);
      return open;
    },
  };
}
