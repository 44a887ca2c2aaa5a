// Every query parameter a dashboard page reads, fed generated values
// (fast-check): no value gives a 500 (issue 53, N3), nor does the search
// box's field (a POST since N2). The audit's four (`to=9999-12-31` on
// messages, messages.csv and requests, a NUL in the search) are pinned as
// 400s that name the field. In-process, signed in as the
// development identity on a claimed project, on the first backend.
import { sha256Hex } from "@sms/crypto";
import { availableBackends } from "@sms/db/testing";
import { claimProject, developmentIdentity } from "@sms/domain";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, startTestApp, type TestApp } from "../harness.ts";

const [backend] = await availableBackends();
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };
const SAME_ORIGIN = { "Sec-Fetch-Site": "same-origin", Origin: "http://api.test" };

/** Each page (under the project) and the query parameters it reads. */
const PAGES: Array<[string, string[]]> = [
  ["/messages", ["status", "mode", "template", "from", "to", "cursor"]],
  ["/messages.csv", ["status", "mode", "template", "from", "to"]],
  ["/requests", ["from", "to", "error_code", "mode", "cursor"]],
  ["/credits", ["cursor"]],
  ["/credits.csv", ["cursor"]],
  ["/keys", ["cursor"]],
  ["/verifications", ["cursor"]],
  ["/spending", ["notice"]],
  ["", ["notice"]],
];

/** Values a form, a hand-edited URL or a scanner sends: any text, dates at and past the edges, controls. */
const values = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "9999-12-31",
    "9999-12-30",
    "0000-01-01",
    "1969-12-31",
    "2026-02-30",
    "+275760-09-13",
    "\u0000",
    "a\u0000b",
    "%00",
    "-1",
    "1e309",
    "NaN",
    "x".repeat(5000),
    "💥",
    "\ud800",
  ),
);

describe("dashboard query parameters never answer 500", () => {
  let t: TestApp;
  let cookie = "";
  let csrf = "";
  let projectPath = "";

  beforeAll(async () => {
    t = await startTestApp({
      backend: backend!,
      env: {
        CLAIM_COOKIE_SECRET: "dashboard-queries-test-cookie-secret-0123",
        CLAIM_SIGN_INS_PER_MINUTE: "1000",
      },
    });
    const signedIn = await t.request("/dashboard/sign-in", {
      method: "POST",
      headers: { ...FORM, ...SAME_ORIGIN },
      body: new URLSearchParams({ provider: "dev", name: "Query Tester" }).toString(),
    });
    const header = signedIn.headers.getSetCookie().find((c) => c.startsWith("sms_dashboard="));
    cookie = header!.split(";")[0]!;
    const key = (await createTestKey((p, init) => t.request(p, init))) as {
      project_id: string;
      claim_url: string;
    };
    const token = key.claim_url.slice(key.claim_url.lastIndexOf("/") + 1);
    const claimed = await claimProject(
      { store: t.app.store, config: { freeCredits: 5 } },
      {
        tokenHash: await sha256Hex(token),
        identity: {
          provider: "dev",
          subject: developmentIdentity("Query Tester")!.subject,
          email: null,
          name: "Query Tester",
        },
        now: t.clock.now(),
      },
    );
    expect(claimed.ok).toBe(true);
    projectPath = `/dashboard/projects/${key.project_id}`;
    const overview = await get(projectPath);
    expect(overview.status).toBe(200);
    csrf = /name="csrf_token" value="([^"]+)"/.exec(await overview.text())?.[1] ?? "";
    expect(csrf).not.toBe("");
  }, 120_000);
  afterAll(() => t?.close());

  const get = (path: string) => t.request(path, { headers: { Cookie: cookie } });
  /** The project's search box, as the browser posts it. */
  const search = (q: string) =>
    t.request(`${projectPath}/search`, {
      method: "POST",
      headers: { ...FORM, ...SAME_ORIGIN, Cookie: cookie },
      body: new URLSearchParams({ q, csrf_token: csrf }).toString(),
    });

  it("the audit's four: a day past 9999-12-30 and a NUL in the search are 400s naming the field", async () => {
    for (const page of ["/messages", "/messages.csv", "/requests"]) {
      const response = await get(`${projectPath}${page}?to=9999-12-31`);
      expect(response.status, page).toBe(400);
      expect(await response.text(), page).toContain("“to” filter");
    }
    for (const q of ["\u0000", "a\u0000b", "a\tb"]) {
      const searched = await search(q);
      expect(searched.status, JSON.stringify(q)).toBe(400);
      expect(await searched.text(), JSON.stringify(q)).toContain("“q”");
    }
    // The last day that is one still reads.
    expect((await get(`${projectPath}/messages?to=9999-12-30`)).status).toBe(200);
  });

  it.each(PAGES)("%s: no generated value of any of its parameters gives a 5xx", async (page, names) => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...names), values, async (name, value) => {
        const response = await get(`${projectPath}${page}?${new URLSearchParams({ [name]: value })}`);
        await response.body?.cancel();
        return response.status < 500;
      }),
      { numRuns: 25 },
    );
  });

  it("the search box: no generated value of its field gives a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(values, async (value) => {
        const response = await search(value);
        await response.body?.cancel();
        return response.status < 500;
      }),
      { numRuns: 50 },
    );
  });
});
