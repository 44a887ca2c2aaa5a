import { describe, expect, it } from "vitest";
import { parseEnv } from "./config/index.ts";
import { startSummary } from "./start-summary.ts";

const production = {
  NODE_ENV: "production",
  DATABASE_URL: "postgresql://db/sms",
  MESSAGE_ENCRYPTION_KEYS: "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  CLAIM_COOKIE_SECRET: "production-cookie-secret-0123456789abcdef",
};

describe("startSummary", () => {
  it("development: the addresses first, then what each default means", () => {
    const lines = startSummary(parseEnv({ PGLITE_DATA_DIR: "memory://" }), "api");
    expect(lines[0]).toBe("SMS API (development) on http://localhost:3000");
    expect(lines.slice(1, 5)).toEqual([
      "  API reference  http://localhost:3000/docs",
      "  dashboard      http://localhost:3000/dashboard",
      "  MCP server     http://localhost:3000/mcp",
      "  for agents     http://localhost:3000/llms.txt",
    ]);
    const text = lines.join("\n");
    expect(text).toContain("PGlite (embedded PostgreSQL) in memory://");
    expect(text).toContain("live sends answer 503 until UBILL_* is set");
    expect(text).toContain("internal       off (set INTERNAL_PORT and INTERNAL_API_TOKEN)");
    expect(text).toContain(
      "MESSAGE_ENCRYPTION_KEYS and CLAIM_COOKIE_SECRET generated in memory for this run",
    );
  });

  it("nothing in production, under NODE_ENV=test, or for a worker", () => {
    expect(startSummary(parseEnv(production), "api")).toEqual([]);
    expect(startSummary(parseEnv({ NODE_ENV: "test" }), "api")).toEqual([]);
    expect(startSummary(parseEnv({}), "worker")).toEqual([]);
  });
});
