// The HTTP slice (http.ts). Issue 25, safer defaults: where the service
// listens by default (loopback outside production, where the development
// sign-in lets anyone sign in as anyone), and production's refusal of an
// http:// PUBLIC_BASE_URL for a host other than this machine.
import { describe, expect, it } from "vitest";
import { ConfigError, parseEnv } from "./index.ts";

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
