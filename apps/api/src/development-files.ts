// Development-only secrets kept in files beside PGlite's data directory
// (`.data/` by default): the message-encryption key, the cookie secret and the
// internal listener's token, generated once (mode 0600) and reused on every
// start. Production configures each one and never reaches this module.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** `name` in the directory that holds PGlite's data directory (`.data/<name>` by default). */
export function developmentFile(pgliteDataDir: string, name: string): string {
  return resolve(dirname(resolve(pgliteDataDir)), name);
}

/** The file's content (trimmed), or null when it does not exist. */
export function readDevelopmentFile(file: string): string | null {
  try {
    return readFileSync(file, "utf8").trim();
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * The file's content, or `generate()` written to it first (0600). `created`
 * says which. If another process creates the file meanwhile, its content wins
 * (never overwritten: what it sealed would become unreadable).
 */
export function readOrCreateDevelopmentFile(
  file: string,
  generate: () => string,
): { value: string; created: boolean } {
  const existing = readDevelopmentFile(file);
  if (existing !== null) return { value: existing, created: false };
  mkdirSync(dirname(file), { recursive: true });
  try {
    writeFileSync(file, `${generate()}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as { code?: string }).code !== "EEXIST") throw error;
    return { value: readDevelopmentFile(file) ?? "", created: false };
  }
  return { value: readDevelopmentFile(file) ?? "", created: true };
}

/** A token for the internal listener: 32 random bytes, base64url (43 characters). */
export function generateInternalToken(): string {
  return randomBytes(32).toString("base64url");
}
