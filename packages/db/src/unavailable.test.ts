import pg from "pg";
import { describe, expect, it } from "vitest";
import { createDatabaseProxy, DEFAULT_TEST_POSTGRES_URL } from "./testing/index.ts";
import { unavailableReason } from "./unavailable.ts";

describe("unavailableReason", () => {
  it("calls a connection that a frozen network path never completes a connect failure (pg.Client's own deadline)", async () => {
    const proxy = await createDatabaseProxy(DEFAULT_TEST_POSTGRES_URL);
    proxy.freeze();
    try {
      const client = new pg.Client({
        connectionString: proxy.urlFor(DEFAULT_TEST_POSTGRES_URL),
        connectionTimeoutMillis: 200,
      });
      client.on("error", () => undefined);
      const failure = await client.connect().then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(unavailableReason(failure)).toBe("connect_failed");
    } finally {
      await proxy.close();
    }
  });

  it("tells connection trouble from a statement's own error", () => {
    expect(unavailableReason(Object.assign(new Error("connect"), { code: "ECONNREFUSED" }))).toBe(
      "connect_failed",
    );
    expect(unavailableReason(new Error("timeout exceeded when trying to connect"))).toBe("connect_failed");
    expect(unavailableReason(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBeNull();
    expect(unavailableReason(new Error("migration 2 failed"))).toBeNull();
    // A database that is gone (dropped mid-run, not restored yet) is an outage too.
    for (const code of ["3D000", "57P04"]) {
      expect(unavailableReason(Object.assign(new Error("database does not exist"), { code }))).toBe(
        "server_unavailable",
      );
    }
  });

  it("a database that refuses writes is unavailable, not a bug: read-only (25006) and disk full (53100)", () => {
    const readOnly = Object.assign(new Error("cannot execute INSERT in a read-only transaction"), {
      code: "25006",
    });
    expect(unavailableReason(readOnly)).toBe("read_only");
    expect(unavailableReason(Object.assign(new Error("could not extend file"), { code: "53100" }))).toBe(
      "disk_full",
    );
  });
});
