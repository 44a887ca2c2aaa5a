import net from "node:net";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { unavailableReason } from "./unavailable.ts";

describe("unavailableReason", () => {
  it("calls a connection that a silent server never completes a connect failure (pg.Client's own deadline)", async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as net.AddressInfo;
      const client = new pg.Client({ host: "127.0.0.1", port, user: "x", connectionTimeoutMillis: 200 });
      client.on("error", () => undefined);
      const failure = await client.connect().then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(unavailableReason(failure)).toBe("connect_failed");
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("tells connection trouble from a statement's own error", () => {
    expect(unavailableReason(Object.assign(new Error("connect"), { code: "ECONNREFUSED" }))).toBe(
      "connect_failed",
    );
    expect(unavailableReason(new Error("timeout exceeded when trying to connect"))).toBe("connect_failed");
    expect(unavailableReason(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBeNull();
    expect(unavailableReason(new Error("migration 2 failed"))).toBeNull();
  });
});
