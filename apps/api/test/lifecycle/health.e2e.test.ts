// Issue 2, point 7: liveness and readiness over real HTTP, with the database
// really cut (its PostgreSQL database dropped under the running server).
import { availableBackends, createPostgresTestDatabase } from "@sms/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "../harness.ts";

const backends = await availableBackends();
const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.cleanup()));
});

describe.each(backends)("health on %s", (backend) => {
  it("reports alive and ready", async () => {
    const server = await startServer({ backend });
    servers.push(server);
    const live = await fetch(`${server.baseUrl}/healthz`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "alive" });
    const ready = await fetch(`${server.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await ready.json()).toEqual({ status: "ready", database: "ok" });
  });
});

describe.skipIf(!backends.includes("postgres"))("readiness when PostgreSQL is cut", () => {
  it("answers 503 not_ready / unreachable with no connection details, while liveness stays 200", async () => {
    const database = await createPostgresTestDatabase();
    const server = await startServer({ backend: "postgres", databaseUrl: database.databaseUrl });
    servers.push(server);
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);

    // Cut the database: terminate the server's connections and drop it.
    await database.drop();

    const started = Date.now();
    const ready = await fetch(`${server.baseUrl}/readyz`);
    const elapsed = Date.now() - started;
    expect(ready.status).toBe(503);
    const text = await ready.text();
    expect(JSON.parse(text)).toEqual({ status: "not_ready", database: "unreachable" });
    expect(text).not.toMatch(/postgres|127\.0\.0\.1|5432|sms_test_/i);
    expect(elapsed).toBeLessThan(10_000);

    const live = await fetch(`${server.baseUrl}/healthz`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "alive" });
  });
});
