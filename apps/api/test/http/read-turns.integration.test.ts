// Read turns (http/gateway.ts, inTurn; bench/log/2026-11-27.md#read-turns-2026-11-27): a read
// by id (GET /v1/messages/{id}, GET /v1/verifications/{id}) waits for one of
// DATABASE_POOL_SIZE turns before its procedure starts, holding nothing but
// its request; other routes never wait for one. Shown on PostgreSQL with a
// lock on api_keys (and the key cache off) that keeps the first read's
// authentication waiting inside its turn: the second read does not reach the
// database until the first has answered, a route without turns is not held
// back, and a read that waits longer than DATABASE_CONNECT_TIMEOUT_MS answers
// as one the pool could not serve (500 with Retry-After).
import { availableBackends } from "@sms/db/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DATABASE_RETRY_AFTER_SECONDS } from "../../src/contract/api-error.ts";
import { createTestKey, lockTable, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";

const backends = await availableBackends();

/** `name{labels} value` of the metrics exposition. */
async function metric(t: TestApp, name: string): Promise<number> {
  const text = await (await t.app.metrics.response()).text();
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name} `));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : Number.NaN;
}

/** Sessions of this database waiting for a lock (the reads whose statement reached it). */
async function lockWaiters(t: TestApp): Promise<number> {
  const rows = await t.app.db.query<{ waiting: number }>(
    `SELECT count(*)::int AS waiting FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return rows[0]?.waiting ?? -1;
}

const message = { to: "+995555123456", template: "verification_code", variables: { code: "482913" } };

describe.runIf(backends.includes("postgres"))("read turns (PostgreSQL)", () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function start(env: Record<string, string>) {
    // One turn; the test database's own pool has four connections, so the
    // lock, the blocked read and the probes below each have one.
    t = await startTestApp({
      backend: "postgres",
      env: { DATABASE_POOL_SIZE: "1", API_KEY_CACHE_TTL_MS: "0", ...env },
    });
    const { api_key: apiKey } = await createTestKey(t.request);
    const sent = await t.request("/v1/messages", sendMessageRequest(apiKey, "turns-1", message));
    expect(sent.status).toBe(201);
    const { id } = (await sent.json()) as { id: string };
    return { t, apiKey, id };
  }

  it("a second read waits for the turn before reaching the database; a route without turns is not held back", async () => {
    const { t, apiKey, id } = await start({ DATABASE_CONNECT_TIMEOUT_MS: "60000" });
    const read = () => t.request(`/v1/messages/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } });
    const lock = await lockTable(t, "api_keys");
    const first = read();
    await vi.waitFor(async () => expect(await lockWaiters(t)).toBe(1), { timeout: 10_000 });
    const second = read();
    await vi.waitFor(async () => expect(await metric(t, 'sms_read_turns{state="waiting"}')).toBe(1), {
      timeout: 10_000,
    });
    expect(await metric(t, 'sms_read_turns{state="in_use"}')).toBe(1);
    expect(await metric(t, 'sms_read_turns{state="size"}')).toBe(1);
    // The second read is not at the database: only the first one's statement waits for the lock.
    expect(await lockWaiters(t)).toBe(1);
    // A route without turns goes on while both reads wait: readiness asks the database and answers.
    expect((await t.request("/readyz")).status).toBe(200);
    expect(await lockWaiters(t)).toBe(1);

    await lock.release();
    for (const response of [await first, await second]) {
      expect(response.status).toBe(200);
      expect(((await response.json()) as { id: string }).id).toBe(id);
    }
    expect(await metric(t, 'sms_read_turns{state="in_use"}')).toBe(0);
    expect(await metric(t, 'sms_read_turns{state="waiting"}')).toBe(0);
  });

  it("a read that waits past the connect deadline answers 500 with Retry-After, and never runs", async () => {
    const { t, apiKey, id } = await start({ DATABASE_CONNECT_TIMEOUT_MS: "100" });
    const read = () =>
      t.request("/v1/verifications/vrf_00000000000000000000000000", {
        headers: { Authorization: `Bearer ${apiKey}` },
      });
    const lock = await lockTable(t, "api_keys");
    const first = t.request(`/v1/messages/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } });
    await vi.waitFor(async () => expect(await lockWaiters(t)).toBe(1), { timeout: 10_000 });
    // A verification's read shares the turns: it waits, then gives up.
    const late = await read();
    expect(late.status).toBe(500);
    expect(late.headers.get("Retry-After")).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
    const body = (await late.json()) as { error: { code: string; message: string; request_id: string } };
    expect(body.error.code).toBe("internal_error");
    expect(body.error.request_id).toBe(late.headers.get("X-Request-Id"));
    expect(await metric(t, 'sms_read_turns{state="waiting"}')).toBe(0);

    await lock.release();
    expect((await first).status).toBe(200);
    // Turns are back: the same read now answers (404: no such verification).
    expect((await read()).status).toBe(404);
  });
});
