// LISTEN on one channel, over one PostgreSQL session of its own (not a pooled
// connection: a pool hands a connection to whoever asks next, and a session
// that LISTENs must stay where it is). One per process, whatever the number
// of callers interested: they share its notifications (the domain's
// store/changes.ts fans them out).
//
// The session reconnects when it breaks (a restarted server, a terminated
// backend), backing off from 100 ms to 5 s; a notification sent while it was
// away is lost, so `onReconnect` tells the listener to look again at whatever
// it was waiting for. PGlite has no second session and no other process to
// hear from: there is no listener (null), and callers poll.
import pg from "pg";
import { type Database, driverOf } from "./database.ts";
import { consoleLogger, type DatabaseLogger, errorMessage } from "./logger.ts";

export type Listener = {
  /** True while the session is connected and listening. */
  listening(): boolean;
  /** Stops listening and closes the session. Safe to call twice. */
  close(): Promise<void>;
};

export type ListenOptions = {
  /** A PostgreSQL identifier: lower case letters, digits and `_`. */
  channel: string;
  /** Each notification's payload, in the order they arrive. Must not throw. */
  onNotify(payload: string): void;
  /** After the session was re-established (not the first time): notifications may have been missed. */
  onReconnect?(): void;
  logger?: DatabaseLogger;
};

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;
const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5_000;

/**
 * Starts listening on `options.channel` (the first LISTEN is under way when it
 * returns; `listening()` says when it holds), or null on PGlite. The session
 * closes with the database (its close() runs this one's first).
 */
export function listen(db: Database, options: ListenOptions): Listener | null {
  const driver = driverOf(db);
  if (driver.kind !== "postgres") return null;
  if (!CHANNEL.test(options.channel)) throw new Error(`listen: not a channel name: ${options.channel}`);
  const logger = options.logger ?? consoleLogger;
  const url = driver.sessionUrl;
  let client: pg.Client | null = null;
  let connected = false;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let everConnected = false;
  /** One warning per outage, not one per retry. */
  let warned = false;
  const warn = (error: unknown, message: string) => {
    if (warned) return;
    warned = true;
    logger.warn({ error: errorMessage(error), channel: options.channel }, message);
  };

  const connect = async () => {
    if (closed) return;
    const session = new pg.Client({
      connectionString: url,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    client = session;
    session.on("notification", (message) => {
      if (message.channel === options.channel) options.onNotify(message.payload ?? "");
    });
    session.on("error", (error) => warn(error, "the LISTEN session broke; reconnecting"));
    session.on("end", () => {
      connected = false;
      if (client === session) client = null;
      schedule();
    });
    try {
      await session.connect();
      await session.query(`LISTEN ${options.channel}`);
      if (closed) return void session.end().catch(() => undefined);
      connected = true;
      retryMs = FIRST_RETRY_MS;
      if (!everConnected || warned) logger.info({ channel: options.channel }, "listening for notifications");
      warned = false;
      if (everConnected) options.onReconnect?.();
      everConnected = true;
    } catch (error) {
      warn(error, "LISTEN failed; retrying");
      await session.end().catch(() => undefined);
      schedule();
    }
  };

  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, retryMs);
    retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
  };

  const close = async () => {
    if (closed) return;
    closed = true;
    clearTimeout(retry);
    connected = false;
    const session = client;
    client = null;
    await session?.end().catch(() => undefined);
  };
  driver.beforeClose.push(close);
  void connect();
  return { listening: () => connected, close };
}
