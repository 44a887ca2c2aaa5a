// Issue 25, safer defaults, in parseEnv: where the service listens by default
// (loopback outside production, where the development sign-in lets anyone
// sign in as anyone), and production's refusal of an http:// PUBLIC_BASE_URL
// for a host other than this machine.
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseEnv } from "../src/env.ts";

const production = {
  NODE_ENV: "production",
  DATABASE_URL: "postgresql://db/sms",
  MESSAGE_ENCRYPTION_KEYS: "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  CLAIM_COOKIE_SECRET: "production-cookie-secret-0123456789abcdef",
};

describe("HOST", () => {
  it("defaults to 127.0.0.1 outside production, 0.0.0.0 in production", () => {
    expect(parseEnv({})).toMatchObject({ host: "127.0.0.1", hostConfigured: false });
    expect(parseEnv({ NODE_ENV: "development" })).toMatchObject({ host: "127.0.0.1", hostConfigured: false });
    expect(parseEnv({ NODE_ENV: "test" }).host).toBe("127.0.0.1");
    expect(parseEnv(production)).toMatchObject({ host: "0.0.0.0", hostConfigured: false });
  });

  it("opens to what HOST names (an empty HOST is the default)", () => {
    expect(parseEnv({ HOST: "0.0.0.0" })).toMatchObject({ host: "0.0.0.0", hostConfigured: true });
    expect(parseEnv({ ...production, HOST: "10.0.0.5" }).host).toBe("10.0.0.5");
    expect(parseEnv({ HOST: "" })).toMatchObject({ host: "127.0.0.1", hostConfigured: false });
  });
});

describe("PUBLIC_BASE_URL in production", () => {
  it("refuses http:// for a public host, with the reason and the way out", () => {
    const attempt = () => parseEnv({ ...production, PUBLIC_BASE_URL: "http://sms.example.ge" });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/PUBLIC_BASE_URL must be an https:\/\/ URL when NODE_ENV=production/);
    expect(attempt).toThrow(/in clear text/);
    expect(attempt).toThrow(/ALLOW_HTTP_PUBLIC_BASE_URL=true/);
    expect(() => parseEnv({ ...production, PUBLIC_BASE_URL: "http://203.0.113.9:3000" })).toThrow(
      ConfigError,
    );
  });

  it("accepts https://, loopback hosts, and http:// when ALLOW_HTTP_PUBLIC_BASE_URL=true", () => {
    for (const url of [
      "https://sms.example.ge",
      "http://localhost:3000",
      "http://127.0.0.1:8080",
      "http://[::1]:3000",
    ]) {
      expect(parseEnv({ ...production, PUBLIC_BASE_URL: url }).publicBaseUrl, url).toBe(url);
    }
    expect(parseEnv(production).publicBaseUrl).toBe("http://localhost:3000");
    expect(
      parseEnv({
        ...production,
        PUBLIC_BASE_URL: "http://sms.example.ge",
        ALLOW_HTTP_PUBLIC_BASE_URL: "true",
      }).publicBaseUrl,
    ).toBe("http://sms.example.ge");
  });

  it("accepts http:// for any host outside production", () => {
    expect(parseEnv({ PUBLIC_BASE_URL: "http://sms.example.ge" }).publicBaseUrl).toBe(
      "http://sms.example.ge",
    );
  });
});

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

describe("the internal listener's development defaults (issue 51)", () => {
  const files: string[] = [];
  const token = "development-internal-token-0123456789abcdef";
  const developmentToken = (file: string) => {
    files.push(file);
    return token;
  };

  it("development, with the option: PORT + 1 and the token from .data/internal-token", () => {
    files.length = 0;
    expect(parseEnv({}, { developmentToken }).internal).toEqual({
      port: 3001,
      host: "127.0.0.1",
      token,
      tokenFile: resolve(".data/internal-token"),
    });
    expect(files).toEqual([resolve(".data/internal-token")]);
    expect(
      parseEnv({ PORT: "4000", PGLITE_DATA_DIR: "/tmp/x/pglite" }, { developmentToken }).internal,
    ).toEqual({ port: 4001, host: "127.0.0.1", token, tokenFile: "/tmp/x/internal-token" });
    // Explicit settings win; an explicit token reads no file.
    files.length = 0;
    expect(
      parseEnv({ INTERNAL_PORT: "9100", INTERNAL_API_TOKEN: "x".repeat(32) }, { developmentToken }).internal,
    ).toEqual({ port: 9100, host: "127.0.0.1", token: "x".repeat(32), tokenFile: null });
    expect(files).toEqual([]);
  });

  it("the operator's tool without the file is told to start the service first", () => {
    expect(() => parseEnv({}, { developmentToken: () => null })).toThrow(
      /INTERNAL_API_TOKEN is not set and .*internal-token does not exist yet: start the service \(npm start\) first/,
    );
    expect(() => parseEnv({}, { developmentToken: () => "short" })).toThrow(/holds no valid token/);
  });

  it("off without the option, under NODE_ENV=test or production, and for an in-memory database", () => {
    files.length = 0;
    expect(parseEnv({}).internal).toBeNull();
    expect(parseEnv({ NODE_ENV: "test" }, { developmentToken }).internal).toBeNull();
    expect(parseEnv(production, { developmentToken }).internal).toBeNull();
    expect(parseEnv({ PGLITE_DATA_DIR: "memory://" }, { developmentToken }).internal).toBeNull();
    expect(files).toEqual([]);
    // Production completes nothing: INTERNAL_PORT alone is refused.
    expect(() => parseEnv({ ...production, INTERNAL_PORT: "3001" }, { developmentToken })).toThrow(
      /INTERNAL_API_TOKEN is required when INTERNAL_PORT is set/,
    );
  });
});
