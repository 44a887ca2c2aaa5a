// The developer console (issue 23) in a real browser: Chromium drives the Deno
// server on PostgreSQL with a fake uBill. A failing request (400
// invalid_variables) is found in the request log through the search box by
// the request_id of its error envelope; a message's page lists the requests
// that created and replayed it; an Idempotency-Key finds its requests; a
// pasted whole API key is refused, in neither the URL nor the page; the
// daily credit cap set on the page refuses the 11th of 50 parallel live sends;
// the low-balance banner shows on every project page. On every page visited:
// at 390 px no id is broken across lines (each id's element is one line box,
// measured in the page), and axe-core (injected into the page) finds no
// serious or critical issue. Screenshots (desktop and mobile, light and dark):
// test-output/screenshots/console-*.png.
import { readFile } from "node:fs/promises";
import type { PrismaDatabase } from "@sms/db/testing";
import type { FakeUbill } from "@sms/provider-ubill/testing";
import type { Browser, Page, Response as PageResponse } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, sendMessageRequest } from "../harness.ts";
import { type BrowserSuite, browserSuiteUnavailable, startBrowserSuite } from "../support/browser-suite.ts";
import { checkPage, claimedProjectWithLiveKey, eventually, type PageKit } from "../support/pages.ts";

const unavailable = await browserSuiteUnavailable("the console browser tests");

describe.skipIf(unavailable)("the developer console in Chromium", () => {
  let suite: BrowserSuite;
  let ubill: FakeUbill;
  let server: ServerProcess;
  let browser: Browser;
  let db: PrismaDatabase;
  let kit: PageKit;

  beforeAll(async () => {
    suite = await startBrowserSuite({
      name: "console",
      ubill: { brands: [{ id: 1, name: "SMSGE", approved: true }] },
      env: {
        CLAIM_FREE_CREDITS: "50",
        DEV_SIGN_IN: "true",
        STATUS_CHECK_INTERVAL_SECONDS: "1",
        MESSAGES_PER_MINUTE: "1000",
        FREE_TIER_DAILY_SEGMENTS: "1000",
        RECIPIENT_MESSAGES_PER_MINUTE: "100",
        RECIPIENT_MESSAGES_PER_DAY: "100",
      },
    });
    ({ server, browser, db, kit } = suite);
    ubill = (suite.ubill as { fake: FakeUbill }).fake;
  }, 120_000);

  afterAll(async () => {
    await suite?.close();
  });

  const api = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);
  const body = (to = "+995555123456", code: unknown = "4821") => ({
    to,
    template: "verification_code",
    variables: { code },
    locale: "en",
  });
  const click: PageKit["click"] = (...args) => kit.click(...args);
  const go: PageKit["go"] = (...args) => kit.go(...args);
  const button: PageKit["button"] = (...args) => kit.button(...args);
  const mainText: PageKit["mainText"] = (...args) => kit.mainText(...args);

  /** Every page this suite opens: axe (light and dark), ids whole at 390 px, screenshots. */
  async function check(page: Page, name: string, options: { ids?: boolean } = {}): Promise<void> {
    const { ids } = await checkPage(page, `console-${name}`);
    if (options.ids !== false) expect(ids, `ids measured on ${name}`).toBeGreaterThan(0);
  }

  async function search(page: Page, query: string): Promise<PageResponse> {
    await page.getByRole("search").getByRole("textbox").fill(query);
    return click(page, page.getByRole("search").getByRole("button", { name: "Find" }));
  }

  it("debug, try and cap: a failing request found by its request_id, a message's requests, the daily cap, the low-balance banner", async () => {
    // The shared fixture: claimed by a local developer (each claim page checked), a live key named ci-bot.
    const { key, liveKey, page } = await claimedProjectWithLiveKey({
      browser,
      kit,
      developer: "Dana Dev",
      keyName: "ci-bot",
      check: (claimPage, step) => check(claimPage, step, { ids: step !== "claim-confirm" }),
    });
    const base = `/dashboard/projects/${key.project_id}`;
    const ticks = async () =>
      page.locator("ol.checklist li").evaluateAll((items) => items.map((item) => item.className));

    // The checklist: only the live key is done.
    expect(await ticks()).toEqual(["todo", "todo", "done", "todo"]);
    await check(page, "overview-checklist");

    // Send a test message from the page: the simulator's numbers are offered with what each does.
    await click(page, page.getByRole("link", { name: "Send a test message" }).first());
    expect(await mainText(page)).toContain("accepted, then reported undeliverable");
    await check(page, "try");
    await page.getByLabel(/^code/).fill("482913");
    await click(page, button(page, "Send test message"));
    const tried = await mainText(page);
    expect(tried).toContain("Accepted.");
    const curl = await page.getByLabel("curl command").inputValue();
    expect(curl).toContain(`curl -X POST '${server.baseUrl}/v1/messages'`);
    expect(curl).toContain('-H "Authorization: Bearer $SMS_API_KEY"');
    expect(curl).toContain('"variables":{"code":"<CODE>"}');
    expect(curl).not.toContain("482913");
    expect(curl).not.toContain(key.api_key);
    await check(page, "try-sent");
    const triedId = (await page.locator("main a code").first().textContent()) ?? "";
    expect(triedId).toMatch(/^msg_/);
    // Its timeline, as it settles (the page reloads itself until then).
    await click(page, page.getByRole("link", { name: "Watch its timeline settle" }));
    await eventually("the timeline to reach delivered", async () => {
      try {
        return (await page.locator("ol.timeline li").count()) >= 3;
      } catch {
        return false; // between two reloads
      }
    });
    await page.waitForLoadState("load");
    expect(await mainText(page)).toMatch(/queued[\s\S]*submitted[\s\S]*delivered/);
    await go(page, base);
    expect(await ticks()).toEqual(["done", "done", "done", "todo"]);

    // A failing request: its envelope's request_id is what a support conversation starts from.
    const failed = await api(
      "/v1/messages",
      sendMessageRequest(key.api_key, "order-bad-1", body(undefined, 42)),
    );
    expect(failed.status).toBe(400);
    const envelope = (await failed.json()) as { error: { code: string; request_id: string } };
    expect(envelope.error.code).toBe("invalid_variables");
    const requestId = envelope.error.request_id;
    expect(failed.headers.get("x-request-id")).toBe(requestId);
    // A send, and its replay under the same Idempotency-Key.
    const sent = await api("/v1/messages", sendMessageRequest(key.api_key, "order-77", body()));
    expect(sent.status).toBe(201);
    const message = (await sent.json()) as { id: string };
    const replay = await api("/v1/messages", sendMessageRequest(key.api_key, "order-77", body()));
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    await eventually(
      "the three requests in the log",
      async () => (await db.prisma.requestLogEntry.count({ where: { projectId: key.project_id } })) >= 3,
    );
    const row = await db.prisma.requestLogEntry.findFirstOrThrow({ where: { id: requestId } });
    expect(row).toMatchObject({
      status: 400,
      errorCode: "invalid_variables",
      idempotencyKey: "order-bad-1",
      mode: "test",
    });

    // The search box on the overview: the request id opens the request.
    await go(page, base);
    const opened = await search(page, requestId);
    expect(opened.status()).toBe(200);
    expect(page.url()).toBe(`${server.baseUrl}${base}/requests/${requestId}`);
    const detail = await mainText(page);
    expect(detail).toContain("invalid_variables");
    expect(detail).toContain("POST /v1/messages");
    expect(detail).toContain("order-bad-1");
    expect(detail).toMatch(/Status\s+400/);
    await check(page, "request");

    // The log, filtered to 4xx.
    await go(page, `${base}/requests?status_class=4xx`);
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(await mainText(page)).toContain(requestId);
    await go(page, `${base}/requests`);
    expect(await page.locator("tbody tr").count()).toBe(3);
    await check(page, "requests");

    // The message's page lists the request that created it and the replay.
    await search(page, message.id);
    expect(page.url()).toBe(`${server.baseUrl}${base}/messages/${message.id}`);
    const requestsOfMessage = page.locator("section", {
      has: page.getByRole("heading", { name: "API requests" }),
    });
    expect(await requestsOfMessage.locator("tbody tr").count()).toBe(2);
    expect((await requestsOfMessage.textContent()) ?? "").toContain("replay");
    await check(page, "message");

    // An Idempotency-Key finds both requests; something unknown is a 404 page.
    const byKey = await search(page, "order-77");
    expect(byKey.status()).toBe(200);
    expect(await page.locator("tbody tr").count()).toBe(2);
    await check(page, "search-idempotency-key");
    expect((await search(page, "req_00000000000000000000000000")).status()).toBe(404);
    // A pasted whole API key (issue 53 N2): posted, refused, and neither in the address bar, the
    // history nor the page (the field comes back empty).
    const pasted = await search(page, key.api_key);
    expect(pasted.status()).toBe(400);
    expect(pasted.request().method()).toBe("POST");
    expect(page.url()).toBe(`${server.baseUrl}${base}/search`);
    expect(await mainText(page)).toContain("looks like a whole API key");
    expect(await page.getByRole("search").getByRole("textbox").inputValue()).toBe("");
    expect(await page.content()).not.toContain(key.api_key.slice(12));
    const visited = await page.evaluate(() => [location.href, document.referrer]);
    expect(JSON.stringify(visited)).not.toContain(key.api_key.slice(12));
    await check(page, "search-whole-key", { ids: false });

    // A verification: the request that started it names it in the log, and "Produced" opens its row.
    const started = await api(
      "/v1/verifications",
      sendMessageRequest(key.api_key, crypto.randomUUID(), { to: "+995555123456", locale: "en" }),
    );
    expect(started.status).toBe(201);
    const verification = (await started.json()) as { id: string };
    const startedBy = started.headers.get("x-request-id") ?? "";
    await eventually(
      "the verification's request in the log",
      async () =>
        (await db.prisma.requestLogEntry.findFirst({ where: { id: startedBy } }))?.verificationId ===
        verification.id,
    );
    await go(page, `${base}/requests?route=${encodeURIComponent("/v1/verifications")}`);
    expect(await page.locator("tbody tr").count()).toBe(1);
    await click(page, page.getByRole("link", { name: verification.id }));
    expect(page.url()).toBe(`${server.baseUrl}${base}/verifications#${verification.id}`);
    expect(await page.locator(`main code[id="${verification.id}"]`).count()).toBe(1);
    await check(page, "verifications");
    // The search box finds it too, at the same place.
    await search(page, verification.id);
    expect(page.url()).toBe(`${server.baseUrl}${base}/verifications#${verification.id}`);

    // Spending: a daily cap of 10 and a warning under 45 credits, set on the page.
    await go(page, `${base}/spending`);
    await page.getByLabel(/Daily credit cap/).fill("10");
    await page.getByLabel(/Warn below/).fill("45");
    await click(page, button(page, "Save limits"));
    expect(await mainText(page)).toContain("The limits were saved.");
    expect(await page.locator(".low-balance").count()).toBe(0);
    // The live key of the fixture (named ci-bot on the keys page).
    // 50 parallel live sends against the cap of 10 (50 free credits): exactly 10 accepted.
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        api(
          "/v1/messages",
          sendMessageRequest(liveKey, crypto.randomUUID(), body(`+9955557${String(i).padStart(5, "0")}`)),
        ),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40);
    const refusal = (await answers[statuses.indexOf(429)]!.json()) as {
      error: { code: string; message: string };
    };
    expect(refusal.error.code).toBe("daily_limit_reached");
    expect(refusal.error.message).toContain("daily credit cap of 10 credits");
    expect(refusal.error.message).toContain("midnight UTC");
    expect(ubill.sends()).toHaveLength(10);
    expect(await db.prisma.message.count({ where: { projectId: key.project_id, mode: "live" } })).toBe(10);

    // 40 credits left, under the warning level of 45: the banner on every project page.
    await go(page, `${base}/spending`);
    expect(await mainText(page)).toMatch(/10 \/ 10/);
    await check(page, "spending");
    for (const path of ["", "/keys", "/messages", "/requests", "/credits", "/sender"]) {
      await go(page, `${base}${path}`);
      const banner = page.locator(".low-balance");
      expect(await banner.count(), `banner on ${path || "/"}`).toBe(1);
      expect((await banner.textContent()) ?? "").toMatch(
        /Low balance: 40 credits, under your warning level of 45; about [\d.]+ days left/,
      );
    }
    await check(page, "low-balance-overview");
    // Both exports, downloaded from their pages and parsed.
    const download = async (linkName: RegExp) => {
      const [file] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("link", { name: linkName }).click(),
      ]);
      const text = await readFile((await file.path()) as string, "utf8");
      return text
        .trimEnd()
        .split("\r\n")
        .map((line) => line.split(","));
    };
    await go(page, `${base}/messages?mode=live`);
    const messagesCsv = await download(/Download these messages as CSV/);
    expect(messagesCsv[0]).toEqual([
      "id",
      "created_at",
      "updated_at",
      "mode",
      "to",
      "template",
      "status",
      "segments",
      "error_code",
    ]);
    expect(messagesCsv.slice(1)).toHaveLength(10);
    for (const line of messagesCsv.slice(1)) {
      expect(line[0]).toMatch(/^msg_/);
      expect(line[3]).toBe("live");
      expect(line[4]).toMatch(/^\+9955•+\d\d$/);
    }
    await go(page, `${base}/credits`);
    const ledgerCsv = await download(/Download the ledger as CSV/);
    expect(ledgerCsv[0]).toEqual(["id", "created_at", "kind", "amount", "message_id", "note"]);
    const kinds = ledgerCsv.slice(1).map((line) => `${line[2]} ${line[3]}`);
    expect(kinds.filter((kind) => kind === "reservation -1")).toHaveLength(10);
    expect(kinds.filter((kind) => kind === "grant_free 50")).toHaveLength(1);
    expect(kinds).toHaveLength(11);

    // The live key and the live sends tick the rest: the checklist is gone.
    await go(page, base);
    expect(await page.locator("ol.checklist").count()).toBe(0);
    await go(page, `${base}/requests?mode=live&status_class=4xx`);
    expect(await page.locator("tbody tr").count()).toBe(40);
    expect(await mainText(page)).toContain("daily_limit_reached");
    // The key's name, given at creation, names it in the log.
    expect(await mainText(page)).toContain("ci-bot");
  }, 480_000);
});
