// The internal listener's slice (internal.ts): its development defaults
// (issue 51) for the service and the operator's tool.
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseEnv } from "./index.ts";

const production = {
  NODE_ENV: "production",
  DATABASE_URL: "postgresql://db/sms",
  MESSAGE_ENCRYPTION_KEYS: "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  CLAIM_COOKIE_SECRET: "production-cookie-secret-0123456789abcdef",
};

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
