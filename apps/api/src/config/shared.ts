// What every slice of the configuration uses: the variable types (as the
// environment spells them: strings, parsed and checked by zod), the units,
// and the one error a bad setting raises.
import { z } from "zod";

export const SECOND_MS = 1000;
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** A whole number between min and max, `fallback` when unset. */
export const int = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** true/false/1/0, `fallback` when unset. */
export const bool = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0"])
    .default(fallback ? "true" : "false")
    .transform((value) => value === "true" || value === "1");

/** Unset and empty are the same: undefined. */
export const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === "" ? undefined : value));

/** Unset (or empty), or a URL. */
export const optionalUrl = optionalString.pipe(z.url().optional());

/** Unset (or empty), or a postgresql:// URL. */
export const postgresUrl = optionalString.pipe(
  z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL")
    .optional(),
);

/** An integer variable that may be unset (or empty). */
export const optionalInt = (min: number, max: number) =>
  optionalString.pipe(
    z
      .string()
      .regex(/^\d+$/, "must be a whole number")
      .transform(Number)
      .pipe(z.number().int().min(min).max(max))
      .optional(),
  );

/** Unset (or empty), or a secret of at least 32 characters. */
export const secret32 = (message: string) => optionalString.pipe(z.string().min(32, message).optional());

export class ConfigError extends Error {
  override name = "ConfigError";
}

export function fail(message: string): never {
  throw new ConfigError(`Invalid configuration: ${message}`);
}

/** Production refuses to start without this variable. */
export function requiredInProduction(production: boolean, name: string, value: string | undefined): void {
  if (production && !value) fail(`${name} is required when NODE_ENV=production`);
}

/** Both or neither of a pair of variables. */
export function together<A, B>(names: string, a: A | undefined, b: B | undefined): [A, B] | null {
  if ((a === undefined) !== (b === undefined)) fail(`${names} must be set together`);
  return a === undefined || b === undefined ? null : [a, b];
}

/** A comma-separated list: entries trimmed, empty ones dropped. */
export function commaList(value: string | undefined, clean = (entry: string) => entry): string[] {
  return (value ?? "")
    .split(",")
    .map((entry) => clean(entry.trim()))
    .filter((entry) => entry !== "");
}

/**
 * The variables of `schema` from the environment. A bad value throws a
 * ConfigError whose one-line message names the variable (never its value: it
 * may be a secret).
 */
export function parseVariables<T extends z.ZodType>(
  schema: T,
  source: Record<string, string | undefined>,
): z.output<T> {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = issue?.path.join(".") || "environment";
  fail(`${name} ${issue?.message ?? "is invalid"}`.replace(/\s+/g, " "));
}
