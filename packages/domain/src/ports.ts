// Small ports the domain depends on; real and test implementations are wired
// in apps/api's composition root.

export type Clock = { now(): Date };
export const systemClock: Clock = { now: () => new Date() };

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
