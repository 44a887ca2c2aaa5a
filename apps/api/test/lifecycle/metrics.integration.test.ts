// The Prometheus metrics, read from the registry after real requests and job
// rounds (in-process, both backends): requests by route and status, sends by
// mode and outcome, limit refusals, provider calls, job rounds, the message
// backlog and the pool. Nothing secret in any label or value.
import { availableBackends } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestKey, lockTable, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";

const backends = await availableBackends();

/** `name{labels} value` lines of the exposition, as a lookup. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const index = line.lastIndexOf(" ");
    out.set(line.slice(0, index), Number(line.slice(index + 1)));
  }
  return out;
}

describe.each(backends)("metrics on %s", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ backend, env: { MESSAGES_PER_MINUTE: "3" } });
  }, 60_000);
  afterAll(() => t?.close());

  it("counts requests, sends, refusals, provider calls and job rounds; reports the backlog", async () => {
    const { api_key: apiKey } = await createTestKey(t.request);
    const body = { to: "+995555123456", template: "verification_code", variables: { code: "482913" } };
    expect((await t.request("/v1/messages", sendMessageRequest(apiKey, "m-1", body))).status).toBe(201);
    expect((await t.request("/v1/messages", sendMessageRequest(apiKey, "m-1", body))).status).toBe(200);
    expect(
      (await t.request("/v1/messages", sendMessageRequest(apiKey, "m-2", { ...body, to: "+995500000001" })))
        .status,
    ).toBe(201);
    expect(
      (await t.request("/v1/messages", sendMessageRequest(apiKey, "m-3", { ...body, to: "+995500000002" })))
        .status,
    ).toBe(503);
    expect((await t.request("/v1/messages", sendMessageRequest(apiKey, "m-4", body))).status).toBe(429);
    expect((await t.request("/nowhere")).status).toBe(404);

    const scheduler = t.app.startJobs();
    t.clock.advance(6_000);
    await scheduler.runOnce("status-check");
    await scheduler.stop();

    const text = await (await t.app.metrics.response()).text();
    const metric = samples(text);
    const value = (key: string) => metric.get(key) ?? 0;

    expect(value('sms_http_requests_total{route="/v1/messages",method="POST",status="201"}')).toBe(2);
    expect(value('sms_http_requests_total{route="/v1/messages",method="POST",status="200"}')).toBe(1);
    expect(value('sms_http_requests_total{route="/v1/messages",method="POST",status="429"}')).toBe(1);
    expect(value('sms_http_requests_total{route="/v1/test-keys",method="POST",status="201"}')).toBe(1);
    expect(value('sms_http_requests_total{route="unmatched",method="GET",status="404"}')).toBe(1);
    expect(value('sms_http_request_duration_seconds_count{route="/v1/messages",method="POST"}')).toBe(5);

    expect(value('sms_sends_total{mode="test",outcome="submitted"}')).toBe(1);
    expect(value('sms_sends_total{mode="test",outcome="failed"}')).toBe(1);
    expect(value('sms_sends_total{mode="test",outcome="replayed"}')).toBe(1);
    expect(value('sms_sends_total{mode="test",outcome="provider_unavailable"}')).toBe(1);
    expect(value('sms_sends_total{mode="test",outcome="rate_limited"}')).toBe(1);
    expect(value('sms_limit_refusals_total{code="rate_limited",route="/v1/messages"}')).toBe(1);
    // Error answers by their envelope's code (the 5xx and provider_unavailable alerts).
    expect(value('sms_http_errors_total{code="rate_limited",route="/v1/messages"}')).toBe(1);
    expect(value('sms_http_errors_total{code="provider_unavailable",route="/v1/messages"}')).toBe(1);
    expect(value('sms_http_errors_total{code="route_not_found",route="unmatched"}')).toBe(1);
    expect(text).not.toMatch(/sms_http_errors_total\{[^}]*code="internal_error"/);

    // Each step of a new send is timed: the replay (answered from memory) has none. A test send asks
    // the simulator first and then writes everything in one statement (its record step), the refusal
    // at the limit included; the one the simulator did not reach takes the claim and gives it back
    // (a write-ahead, then its submit and record).
    expect(value('sms_request_phase_duration_seconds_count{phase="authenticate"}')).toBe(5);
    // A send's steps carry the key's mode: a live send's wait on uBill and on the live slots.
    expect(value('sms_request_phase_duration_seconds_count{phase="send_prepare",mode="test"}')).toBe(4);
    expect(value('sms_request_phase_duration_seconds_count{phase="send_write_ahead",mode="test"}')).toBe(1);
    expect(value('sms_request_phase_duration_seconds_count{phase="send_submit",mode="test"}')).toBe(4);
    expect(value('sms_request_phase_duration_seconds_count{phase="send_record",mode="test"}')).toBe(4);
    expect(text).not.toContain('mode="live"');
    expect(text).toContain("sms_event_loop_delay_seconds_bucket");
    // prom-client's own event-loop lag gauges are not served (a scrape would compute them on the
    // event loop, 10 ms under load); its other default metrics are.
    expect(text).not.toContain("nodejs_eventloop_lag");
    expect(text).toContain("process_cpu_user_seconds_total");
    expect(text).toContain("nodejs_heap_size_used_bytes");

    // The simulator is asked before a test send's one statement: the send refused at the limit asked it too.
    expect(
      value('sms_provider_calls_total{provider="simulator",operation="submit",outcome="accepted"}'),
    ).toBe(2);
    expect(
      value('sms_provider_calls_total{provider="simulator",operation="submit",outcome="rejected"}'),
    ).toBe(1);
    expect(
      value('sms_provider_calls_total{provider="simulator",operation="submit",outcome="unreachable"}'),
    ).toBe(1);
    expect(
      value('sms_provider_calls_total{provider="simulator",operation="status",outcome="delivered"}'),
    ).toBe(1);

    expect(value('sms_job_round_duration_seconds_count{job="status-check"}')).toBe(1);
    expect(value('sms_job_rows_total{job="status-check",count="delivered"}')).toBe(1);
    expect(value('sms_messages_backlog{state="due"}')).toBe(0);
    expect(value('sms_messages_backlog{state="queued"}')).toBe(0);
    expect(metric.get("sms_messages_backlog_oldest_due_seconds")).toBe(0);
    // What /readyz answers, and the primary's timeline (PostgreSQL only: PGlite has no failover).
    expect(metric.get("sms_ready")).toBe(1);
    if (backend === "postgres") {
      expect(metric.get('sms_db_timeline{server="primary"}')).toBeGreaterThanOrEqual(1);
    } else expect(text).not.toMatch(/^sms_db_timeline/m);
    // No read replica here: no lag is served.
    expect(text).not.toMatch(/^sms_db_replica_lag_seconds/m);
    if (backend === "postgres") expect(value('sms_db_pool_connections{state="total"}')).toBeGreaterThan(0);
    expect(value("process_resident_memory_bytes")).toBeGreaterThan(0);
    // Live sends' share of the pool: half of it; none in use or waiting once the sends are answered.
    expect(value('sms_live_send_slots{state="size"}')).toBeGreaterThanOrEqual(1);
    expect(value('sms_live_send_slots{state="in_use"}')).toBe(0);
    expect(text).toContain('sms_live_send_slots{state="waiting"} 0');

    // The in-process caches, by namespace (summed over the apps alive in this process): the replay
    // of m-1 was answered from the answered keys, the key's later requests from the API keys' cache.
    expect(value('sms_cache_hits_total{namespace="answered_keys"}')).toBeGreaterThanOrEqual(1);
    expect(value('sms_cache_hits_total{namespace="api_keys"}')).toBeGreaterThanOrEqual(1);
    expect(value('sms_cache_entries{namespace="api_keys"}')).toBeGreaterThanOrEqual(1);
    for (const namespace of ["answered_keys", "api_keys", "project_refusals", "auth_failures"]) {
      expect(text).toContain(`sms_cache_misses_total{namespace="${namespace}"}`);
      expect(text).toContain(`sms_cache_evictions_total{namespace="${namespace}"}`);
      expect(text).toContain(`sms_cache_loads_total{namespace="${namespace}"}`);
      expect(text).toContain(`sms_cache_load_joins_total{namespace="${namespace}"}`);
    }

    // Labels are templates, codes and names: no key, number or message id.
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain("995555123456");
    expect(text).not.toMatch(/msg_[0-9a-z]{26}/);
  });
});

// The backlog gauge counts `messages` at scrape time. A count that cannot run
// (the table locked by a partition's creation or detachment, a database that
// does not answer) must not hold the scrape, nor fail it: the scrape serves
// the last count, says how old it is, and keeps one count waiting at most.
describe.runIf(backends.includes("postgres"))("the backlog while messages is locked (PostgreSQL)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ backend: "postgres" });
  }, 60_000);
  afterAll(() => t?.close());

  const scrape = async () => {
    const response = await t.app.metrics.response();
    expect(response.status).toBe(200);
    return samples(await response.text());
  };
  const lockWaiters = async () => {
    const rows = await t.app.db.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return rows[0]?.waiting ?? -1;
  };

  it("serves the last count with its age, and every other metric, while the count waits", async () => {
    const { api_key: apiKey } = await createTestKey(t.request);
    const body = { to: "+995555123456", template: "verification_code", variables: { code: "482913" } };
    expect((await t.request("/v1/messages", sendMessageRequest(apiKey, "b-1", body))).status).toBe(201);
    t.clock.advance(6_000);

    const fresh = await scrape();
    expect(fresh.get('sms_messages_backlog{state="due"}')).toBe(1);
    expect(fresh.get("sms_messages_backlog_age_seconds")).toBeLessThan(1);
    // Due since the send's first check time, which the clock has passed.
    expect(fresh.get("sms_messages_backlog_oldest_due_seconds")).toBeGreaterThan(0);

    const lock = await lockTable(t, "messages");
    try {
      const first = await scrape();
      const second = await scrape();
      for (const stale of [first, second]) {
        expect(stale.get('sms_messages_backlog{state="due"}')).toBe(1);
        // Waited for its one-second deadline, then served the count made before the lock.
        expect(stale.get("sms_messages_backlog_age_seconds")).toBeGreaterThanOrEqual(1);
        expect(stale.get('sms_http_requests_total{route="/v1/messages",method="POST",status="201"}')).toBe(1);
      }
      // The second scrape waited for the first one's count; it did not start another.
      expect(await lockWaiters()).toBe(1);
    } finally {
      await lock.release();
    }

    // The waiting count finishes once the lock is gone; the next scrape counts afresh.
    await vi.waitFor(async () => expect(await lockWaiters()).toBe(0), { timeout: 10_000 });
    const after = await scrape();
    expect(after.get('sms_messages_backlog{state="due"}')).toBe(1);
    expect(after.get("sms_messages_backlog_age_seconds")).toBeLessThan(1);
  }, 30_000);
});
