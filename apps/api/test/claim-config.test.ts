// The claim flow's configuration in parseEnv: defaults, providers set
// together, and the production requirements.
import { describe, expect, it } from "vitest";
import { ConfigError, parseEnv } from "../src/env.ts";

const base = { NODE_ENV: "test" };
const production = {
  NODE_ENV: "production",
  DATABASE_URL: "postgresql://db/sms",
  MESSAGE_ENCRYPTION_KEYS: "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  CLAIM_COOKIE_SECRET: "production-cookie-secret-0123456789abcdef",
};

describe("claim configuration", () => {
  it("offers no provider until one is configured, 50 free credits and an hourly purge", () => {
    const config = parseEnv(base);
    expect(config.claims).toEqual({
      freeCredits: 50,
      signInsPerMinute: 20,
      cookieSecret: undefined,
      google: null,
      github: null,
    });
    expect(config.retention.unclaimedPurgeIntervalMs).toBe(3_600_000);
  });

  it("defaults a configured provider to the real provider's URLs", () => {
    const config = parseEnv({
      ...base,
      GOOGLE_CLIENT_ID: "g-id",
      GOOGLE_CLIENT_SECRET: "g-secret",
      GITHUB_CLIENT_ID: "gh-id",
      GITHUB_CLIENT_SECRET: "gh-secret",
    });
    expect(config.claims.google).toEqual({
      issuerUrl: "https://accounts.google.com",
      clientId: "g-id",
      clientSecret: "g-secret",
    });
    expect(config.claims.github).toEqual({
      authorizeUrl: "https://github.com/login/oauth/authorize",
      tokenUrl: "https://github.com/login/oauth/access_token",
      apiUrl: "https://api.github.com",
      clientId: "gh-id",
      clientSecret: "gh-secret",
    });
  });

  it.each([
    [{ GOOGLE_CLIENT_ID: "id" }, "GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET"],
    [{ GITHUB_CLIENT_SECRET: "secret" }, "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET"],
    [{ CLAIM_COOKIE_SECRET: "short" }, "CLAIM_COOKIE_SECRET"],
    [{ GOOGLE_ISSUER_URL: "not a url" }, "GOOGLE_ISSUER_URL"],
  ])("refuses %o naming %s, never the value", (extra, expected) => {
    expect(() => parseEnv({ ...base, ...extra })).toThrow(ConfigError);
    expect(() => parseEnv({ ...base, ...extra })).toThrow(expected);
    try {
      parseEnv({ ...base, ...extra });
    } catch (error) {
      expect((error as Error).message).not.toMatch(/short|not a url/);
    }
  });

  it("requires CLAIM_COOKIE_SECRET and https provider URLs in production", () => {
    expect(parseEnv(production).nodeEnv).toBe("production");
    expect(() => parseEnv({ ...production, CLAIM_COOKIE_SECRET: "" })).toThrow(
      "CLAIM_COOKIE_SECRET is required when NODE_ENV=production",
    );
    expect(() => parseEnv({ ...production, GOOGLE_ISSUER_URL: "http://127.0.0.1:8080" })).toThrow(
      "GOOGLE_ISSUER_URL must be an https:// URL",
    );
    expect(() => parseEnv({ ...production, GITHUB_API_URL: "http://api.github.test" })).toThrow(
      "GITHUB_API_URL",
    );
  });
});
