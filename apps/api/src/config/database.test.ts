// The database slice (database.ts): the read replica (issue 26), and the
// variables `npm run db:migrate` reads (parseMigrationEnv), checked as the
// service checks them.
import { describe, expect, it } from "vitest";
import { ConfigError, parseEnv, parseMigrationEnv } from "./index.ts";

describe("DATABASE_READ_URL (issue 26)", () => {
  it("is off by default: every read goes to the primary", () => {
    expect(parseEnv({}).database.read).toBeNull();
    expect(parseEnv({ DATABASE_URL: "postgresql://db/sms" }).database.read).toBeNull();
    expect(parseEnv({ DATABASE_URL: "postgresql://db/sms", DATABASE_READ_URL: "" }).database.read).toBeNull();
  });

  it("names the standby, with the read-your-writes window and the retry delay", () => {
    expect(
      parseEnv({ DATABASE_URL: "postgresql://db/sms", DATABASE_READ_URL: "postgresql://standby/sms" })
        .database.read,
    ).toEqual({ url: "postgresql://standby/sms", recentWindowMs: 30_000, retryAfterMs: 5_000 });
    expect(
      parseEnv({
        DATABASE_URL: "postgresql://db/sms",
        DATABASE_READ_URL: "postgresql://standby/sms",
        DATABASE_READ_FALLBACK_WINDOW_MS: "0",
        DATABASE_READ_RETRY_AFTER_MS: "250",
      }).database.read,
    ).toEqual({ url: "postgresql://standby/sms", recentWindowMs: 0, retryAfterMs: 250 });
  });

  it("refuses a replica without DATABASE_URL (PGlite has none) and a URL that is not postgresql://", () => {
    expect(() => parseEnv({ DATABASE_READ_URL: "postgresql://standby/sms" })).toThrow(
      /DATABASE_READ_URL needs DATABASE_URL/,
    );
    const bad = () =>
      parseEnv({ DATABASE_URL: "postgresql://db/sms", DATABASE_READ_URL: "mysql://user:secret@standby/sms" });
    expect(bad).toThrow(/DATABASE_READ_URL must be a postgresql:\/\/ URL/);
    expect(bad).not.toThrow(/secret/);
  });
});

describe("where migrations run (parseMigrationEnv, issue 52)", () => {
  it("DATABASE_MIGRATION_URL, else DATABASE_URL, else PGlite at PGLITE_DATA_DIR", () => {
    expect(parseMigrationEnv({})).toEqual({ migrationUrl: undefined, pgliteDataDir: ".data/pglite" });
    expect(parseMigrationEnv({ PGLITE_DATA_DIR: "/tmp/x/pglite", DATABASE_URL: "" })).toEqual({
      migrationUrl: undefined,
      pgliteDataDir: "/tmp/x/pglite",
    });
    expect(parseMigrationEnv({ DATABASE_URL: "postgresql://pooler/sms" }).migrationUrl).toBe(
      "postgresql://pooler/sms",
    );
    const behindPooler = {
      DATABASE_URL: "postgresql://pooler/sms",
      DATABASE_MIGRATION_URL: "postgresql://db/sms",
    };
    expect(parseMigrationEnv(behindPooler).migrationUrl).toBe("postgresql://db/sms");
    // The same answer the service's own configuration gives.
    expect(parseEnv(behindPooler).database.migrationUrl).toBe("postgresql://db/sms");
  });

  it("reads only the database's variables: the rest of the environment is not checked", () => {
    expect(
      parseMigrationEnv({ NODE_ENV: "production", PORT: "not a port", CLAIM_COOKIE_SECRET: "short" }),
    ).toEqual({ migrationUrl: undefined, pgliteDataDir: ".data/pglite" });
  });

  it("refuses what the service refuses, naming the variable and never its value", () => {
    const bad = () => parseMigrationEnv({ DATABASE_URL: "mysql://user:secret@db/sms" });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/DATABASE_URL must be a postgresql:\/\/ URL/);
    expect(bad).not.toThrow(/secret/);
    expect(() => parseMigrationEnv({ DATABASE_MIGRATION_URL: "postgresql://db/sms" })).toThrow(
      /DATABASE_MIGRATION_URL needs DATABASE_URL/,
    );
  });
});
