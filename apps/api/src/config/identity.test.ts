// The identity providers' slice (identity.ts). The claim flow: defaults,
// providers set together, and the production requirements. The dashboard: the
// development provider (on by default only outside production and without a
// real provider; never in production), OPERATOR_IDENTITIES, and the session
// durations.
import { describe, expect, it } from "vitest";
import { ConfigError, parseEnv } from "./index.ts";

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

const github = { GITHUB_CLIENT_ID: "gh-id", GITHUB_CLIENT_SECRET: "gh-secret" };

describe("dashboard configuration", () => {
  it("turns development sign-in on outside production when no real provider is configured", () => {
    for (const NODE_ENV of ["development", "test"]) {
      expect(parseEnv({ NODE_ENV }).dashboard.devSignIn, NODE_ENV).toBe(true);
      expect(parseEnv({ NODE_ENV, ...github }).dashboard.devSignIn, `${NODE_ENV} with GitHub`).toBe(false);
      expect(parseEnv({ NODE_ENV, ...github, DEV_SIGN_IN: "true" }).dashboard.devSignIn).toBe(true);
      expect(parseEnv({ NODE_ENV, DEV_SIGN_IN: "false" }).dashboard.devSignIn).toBe(false);
    }
  });

  it("never in production: off by default, and DEV_SIGN_IN=true stops start-up", () => {
    expect(parseEnv(production).dashboard.devSignIn).toBe(false);
    expect(parseEnv({ ...production, DEV_SIGN_IN: "auto" }).dashboard.devSignIn).toBe(false);
    expect(() => parseEnv({ ...production, DEV_SIGN_IN: "true" })).toThrow(
      new ConfigError("Invalid configuration: DEV_SIGN_IN cannot be true when NODE_ENV=production"),
    );
    expect(() => parseEnv({ NODE_ENV: "test", DEV_SIGN_IN: "yes" })).toThrow(/DEV_SIGN_IN/);
  });

  it("reads OPERATOR_IDENTITIES as provider:subject entries, and refuses dev: ones in production", () => {
    expect(parseEnv({ NODE_ENV: "test" }).dashboard.operatorIdentities).toEqual([]);
    expect(
      parseEnv({ NODE_ENV: "test", OPERATOR_IDENTITIES: " github:583231, google:1082345,dev:olga-ops ," })
        .dashboard.operatorIdentities,
    ).toEqual(["github:583231", "google:1082345", "dev:olga-ops"]);
    for (const bad of ["583231", "twitter:1", "github:", "github:a b"]) {
      expect(() => parseEnv({ NODE_ENV: "test", OPERATOR_IDENTITIES: bad }), bad).toThrow(
        /OPERATOR_IDENTITIES must list provider:subject entries/,
      );
    }
    expect(parseEnv({ ...production, OPERATOR_IDENTITIES: "github:1" }).dashboard.operatorIdentities).toEqual(
      ["github:1"],
    );
    expect(() => parseEnv({ ...production, OPERATOR_IDENTITIES: "github:1,dev:olga" })).toThrow(
      /cannot name dev: identities when NODE_ENV=production/,
    );
  });

  it("sessions: 12 hours idle and 7 days at most by default, both configurable", () => {
    expect(parseEnv({ NODE_ENV: "test" }).dashboard).toMatchObject({
      sessionIdleMs: 12 * 3_600_000,
      sessionMaxMs: 7 * 86_400_000,
    });
    expect(
      parseEnv({ NODE_ENV: "test", DASHBOARD_SESSION_IDLE_MINUTES: "30", DASHBOARD_SESSION_MAX_HOURS: "24" })
        .dashboard,
    ).toMatchObject({ sessionIdleMs: 30 * 60_000, sessionMaxMs: 24 * 3_600_000 });
    expect(() => parseEnv({ NODE_ENV: "test", DASHBOARD_SESSION_IDLE_MINUTES: "1" })).toThrow(
      /DASHBOARD_SESSION_IDLE_MINUTES/,
    );
  });
});
