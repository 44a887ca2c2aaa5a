import net from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { detectBackends, redactUrl } from "./testing/index.ts";

async function closedPortUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `postgresql://postgres:hunter2@127.0.0.1:${port}/postgres`;
}

describe("detectBackends", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it("leaves PostgreSQL out with one warning line when it does not answer outside CI", async () => {
    vi.stubEnv("SMS_DB_TESTING_WARNED", "");
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const backends = await detectBackends({ TEST_POSTGRES_URL: await closedPortUrl() });
    expect(backends).toEqual(["pglite"]);
    expect(warn).toHaveBeenCalledTimes(1);
    const line = String(warn.mock.calls[0]?.[0]);
    expect(line).not.toContain("\n");
    expect(line).toMatch(/does not answer/);
    expect(line).not.toContain("hunter2");
    // Said once per process.
    await detectBackends({ TEST_POSTGRES_URL: await closedPortUrl() });
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it("throws in CI rather than silently skipping PostgreSQL", async () => {
    await expect(detectBackends({ TEST_POSTGRES_URL: await closedPortUrl(), CI: "true" })).rejects.toThrow(
      /CI is set, so the PostgreSQL tests may not be skipped/,
    );
  });
});

describe("redactUrl", () => {
  it("hides the password and keeps the rest", () => {
    expect(redactUrl("postgresql://app:s3cret@db.example:5432/sms")).toBe(
      "postgresql://app:***@db.example:5432/sms",
    );
    expect(redactUrl("postgresql://postgres@127.0.0.1:5432/postgres")).toBe(
      "postgresql://postgres@127.0.0.1:5432/postgres",
    );
  });
});
