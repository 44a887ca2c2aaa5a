// Small ports the domain depends on; real and test implementations are wired
// in apps/api's composition root.

export type Clock = { now(): Date };
export const systemClock: Clock = { now: () => new Date() };

/**
 * Real elapsed time and waiting, for bounded retries and polling. Not the
 * business time (that is the Clock, which tests set by hand): a retry budget
 * must run out even while a test's clock stands still.
 */
export type Timer = {
  /** A monotonic reading in milliseconds; only differences mean anything. */
  monotonicMs(): number;
  sleep(ms: number): Promise<void>;
};
export const systemTimer: Timer = {
  monotonicMs: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The subset of pino's logger the domain uses. */
export type Logger = {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
};

/** A Logger that writes nothing (tests and tools). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
