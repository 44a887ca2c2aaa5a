// Issue 53, item 3 (an extension): a test send reports the live per-number
// limits and what a live key would have left for the number
// (Live-Recipient-Limit, Live-Recipient-Remaining), on POST /v1/messages and
// POST /v1/verifications, without ever refusing a test send. The real Deno
// process over HTTP, on PGlite and on PostgreSQL.
import { availableBackends } from "@sms/db/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestKey, type ServerProcess, sendMessageRequest, startServer } from "../harness.ts";
import { awayFromMinuteEdge, body, ORDINARY } from "../support/messages.ts";
import { verificationClient } from "../support/verifications.ts";

const backends = await availableBackends();
const LIMITS = {
  TEST_KEYS_PER_MINUTE: "1000",
  TEST_KEYS_PER_DAY: "1000",
  TEST_KEYS_PER_DAY_TOTAL: "100000",
};

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** The two headers of a response, as sent. */
const live = (response: Response) => ({
  limit: response.headers.get("live-recipient-limit"),
  remaining: response.headers.get("live-recipient-remaining"),
});

describe.each(backends)("a test send names the live per-number limits on %s", (backend) => {
  let server: ServerProcess;
  let seq = 0;
  const key = () => `live-recipient-${++seq}`;
  const call = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);
  const send = (apiKey: string, idempotencyKey: string, to: string) =>
    call("/v1/messages", sendMessageRequest(apiKey, idempotencyKey, body({ to })));

  beforeAll(async () => {
    server = await startServer({ backend, env: LIMITS });
    cleanups.push(() => server.cleanup());
  }, 120_000);
  beforeEach(awayFromMinuteEdge, 20_000);

  it("counts down per number (minute 1, 0, 0; day 9, 8, 7), all 201; another number starts again; a replay counts nothing", async () => {
    const { api_key: apiKey } = await createTestKey(call);
    const first = key();
    const answers = [];
    for (const idempotencyKey of [first, key(), key()]) {
      const response = await send(apiKey, idempotencyKey, ORDINARY);
      expect(response.status).toBe(201);
      answers.push(live(response));
    }
    expect(answers).toEqual([
      { limit: "minute=2, day=10", remaining: "minute=1, day=9" },
      { limit: "minute=2, day=10", remaining: "minute=0, day=8" },
      { limit: "minute=2, day=10", remaining: "minute=0, day=7" },
    ]);

    // Another number has its own allowance.
    const other = await send(apiKey, key(), "+995555000111");
    expect(other.status).toBe(201);
    expect(live(other)).toEqual({ limit: "minute=2, day=10", remaining: "minute=1, day=9" });

    // A replay (200) carries neither header and counts nothing: the next new send is the fourth.
    const replay = await send(apiKey, first, ORDINARY);
    expect(replay.status).toBe(200);
    expect(live(replay)).toEqual({ limit: null, remaining: null });
    const fourth = await send(apiKey, key(), ORDINARY);
    expect(live(fourth).remaining).toBe("minute=0, day=6");
  });

  it("is never refused for it: past the day's ten a test send is 201 with nothing left, never below 0", async () => {
    const { api_key: apiKey } = await createTestKey(call);
    const to = "+995555000222";
    let last: Response | undefined;
    for (let i = 0; i < 12; i++) {
      last = await send(apiKey, key(), to);
      expect(last.status).toBe(201);
    }
    expect(live(last as Response).remaining).toBe("minute=0, day=0");
  });

  it("counts a verification's SMS with the messages to the same number, as a live key does", async () => {
    const { api_key: apiKey } = await createTestKey(call);
    const to = "+995555000333";
    const { start } = verificationClient(call);
    const started = await start(apiKey, key(), { to });
    expect(started.status).toBe(201);
    expect(live(started)).toEqual({ limit: "minute=2, day=10", remaining: "minute=1, day=9" });
    const message = await send(apiKey, key(), to);
    expect(live(message).remaining).toBe("minute=0, day=8");
  });

  it("counts per project: another project's sends to the same number leave this one's alone", async () => {
    const [a, b] = [await createTestKey(call), await createTestKey(call)];
    const to = "+995555000444";
    expect(live(await send(a.api_key, key(), to)).remaining).toBe("minute=1, day=9");
    expect(live(await send(b.api_key, key(), to)).remaining).toBe("minute=1, day=9");
  });

  it("declares both headers on the 201 of both routes in /openapi.json", async () => {
    const document = (await (await call("/openapi.json")).json()) as {
      paths: Record<string, { post: { responses: Record<string, { headers?: Record<string, unknown> }> } }>;
    };
    for (const path of ["/v1/messages", "/v1/verifications"]) {
      const headers = Object.keys(document.paths[path]?.post.responses["201"]?.headers ?? {});
      expect(headers).toEqual(expect.arrayContaining(["Live-Recipient-Limit", "Live-Recipient-Remaining"]));
    }
  });
});
