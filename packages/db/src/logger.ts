/**
 * The little this package logs. The shape is pino's `(fields, message)`, so the
 * app's pino logger (or a child of it) can be passed as is.
 */
export type DatabaseLogger = {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
};

/** Used when no logger is given: stays quiet about routine events. */
export const consoleLogger: DatabaseLogger = {
  info() {},
  warn(fields, message) {
    console.warn(`db: ${message}`, fields);
  },
  error(fields, message) {
    console.error(`db: ${message}`, fields);
  },
};

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
