// The HTTP listeners (public port and internal listener). Requests are parsed
// and answered by Deno's own HTTP server, the same native code as Deno.serve,
// but connections are accepted here, one at a time, because Deno.serve offers
// none of what a public service needs (docs/operations.md#connections):
//
//   - a cap on open connections (MAX_CONNECTIONS): beyond it a new connection
//     gets a 503 envelope and is closed;
//   - an accept loop that survives running out of file descriptors (Deno's
//     own loop ends the server on EMFILE): it backs off and tries again.
//     (Deno itself raises the soft RLIMIT_NOFILE to the hard limit at start-up;
//     reading the limit back needs --allow-all, so the cap is configured, not
//     derived: see docs/operations.md#connections);
//   - deadlines: a new connection must deliver its request headers within
//     HTTP_HEADERS_TIMEOUT_SECONDS, a keep-alive connection with nothing in
//     flight (or a response its client does not take) is closed after
//     HTTP_IDLE_TIMEOUT_SECONDS, and a body must arrive within
//     HTTP_BODY_TIMEOUT_SECONDS (enforced by read-body.ts);
//   - closing a connection after a response whose request body was not read
//     to its end (too large, too slow, or ignored by the route): Deno would
//     otherwise keep draining an endless body forever;
//   - a drain for shutdown, and a hard close for its deadline.
//
// Each accepted connection is handed to Deno's internal serveHttpOnConnection
// (`Deno[Deno.internal]`, the per-connection form of Deno.serve), so every
// request takes exactly Deno.serve's path; the cost is about 1.5 µs per request
// and 15 µs per new connection (bench/README.md#http-server). It is not a public API: start-up fails
// loudly if a Deno upgrade removes it, and the e2e tests (connections.e2e)
// exercise every behaviour above against the pinned Deno.
import { newId } from "@sms/crypto";
import { ApiError } from "../contract/errors.ts";
import { INTERNAL_ERROR_MESSAGE, REFUSAL_MESSAGES } from "../contract/wording.ts";
import type { AppLogger } from "../logger.ts";
import { errorResponse } from "./errors.ts";
import type { Handler } from "./gateway.ts";
import { bodyLeftUnread, setBodyDeadline } from "./read-body.ts";

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
/** At most one warning line per kind (shed connections, failed accepts) per this interval. */
const WARN_INTERVAL_MS = 10_000;
/** The internal listener's own cap: it serves a few tools, never the public. */
export const INTERNAL_MAX_CONNECTIONS = 32;

export type ServeOptions = {
  /** Names the listener in logs ("public", "internal"). */
  name: string;
  hostname: string;
  port: number;
  handler: Handler;
  maxConnections: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
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
  cancel: (() => void) | null;
  /** Requests whose response has not been sent yet. */
  inFlight: number;
  /** No request has arrived yet: the headers deadline applies, not the idle one. */
  fresh: boolean;
  /** performance.now() when the connection last had nothing in flight. */
  idleSince: number;
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

/** The whole answer to a connection over the cap, written before it is closed. */
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
    `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${encoder.encode(body).byteLength}\r\nRetry-After: 1\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function isListenerClosed(error: unknown): boolean {
  return error instanceof Deno.errors.BadResource || error instanceof Deno.errors.Interrupted;
}

export function serveHttp(options: ServeOptions): HttpServer {
  const serveConnection = serveHttpOnConnection();
  const { logger } = options;
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const connections = new Set<Connection>();
  const shed = throttledWarning(logger, "connection limit reached: new connections are refused", {
    listener: options.name,
    max_connections: options.maxConnections,
  });
  const acceptFailures = throttledWarning(logger, "accepting a connection failed; retrying", {
    listener: options.name,
  });
  let draining = false;
  let drained: (() => void) | undefined;

  function close(connection: Connection) {
    if (connection.closing || !connection.cancel) return;
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
    connections.delete(connection);
    connection.closing = true;
    if (draining && connections.size === 0) drained?.();
  }

  const onError = (error: unknown) => {
    logger.error({ listener: options.name, err: error }, "request handler failed");
    const requestId = newId("req");
    return errorResponse(new ApiError("internal_error", INTERNAL_ERROR_MESSAGE), requestId);
  };

  function serve(conn: Deno.Conn) {
    const connection: Connection = {
      cancel: null,
      inFlight: 0,
      fresh: true,
      idleSince: performance.now(),
      sendingSince: null,
      closeWhenIdle: false,
      closing: false,
    };
    connections.add(connection);
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
      setBodyDeadline(request, performance.now() + options.bodyTimeoutMs);
      const response = await options.handler(request, { remoteAddress });
      connection.sendingSince = performance.now();
      if (bodyLeftUnread(request)) connection.closeWhenIdle = true;
      if (connection.closeWhenIdle || draining) {
        try {
          response.headers.set("Connection", "close");
        } catch {
          // Immutable headers: the connection closes all the same.
        }
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

  function refuse(conn: Deno.Conn) {
    shed.record();
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
      if (connections.size >= options.maxConnections) refuse(conn);
      else serve(conn);
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
          if (connection.inFlight === 0) close(connection);
          else connection.closeWhenIdle = true;
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
