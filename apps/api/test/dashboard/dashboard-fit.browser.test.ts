// The dashboard fits (issue 54 item 5), measured in Chromium against the real
// Deno server on PostgreSQL: at 1280 px the Messages and Requests tables show
// every column without scrolling inside their frame (a 200-character
// Idempotency-Key and the longest route included) and a request's link to its
// message is in view; at 390 px the project's tabs are one row that scrolls
// sideways and the page's content starts in the first screen, under the
// development banner. The overview's delivery rate per mode, the charts'
// y-axis and empty state, the project's name (settings, list, header; escaped
// by the page mechanism), and "Send a test message" (the templates' texts
// with their placeholders and segment counts, errors without Markdown
// backticks, never the typed code). Screenshots: test-output/screenshots/fit-*.png.
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendMessageRequest } from "../harness.ts";
import { type BrowserSuite, browserSuiteUnavailable, startBrowserSuite } from "../support/browser-suite.ts";
import {
  checkPage,
  claimedProjectWithLiveKey,
  DESKTOP,
  eventually,
  MOBILE,
  type PageKit,
  type TestKey,
} from "../support/pages.ts";
import { verificationClient } from "../support/verifications.ts";

const unavailable = await browserSuiteUnavailable("the dashboard fit browser tests");

/** What the page renders of `locator` (Playwright's innerText: what a reader sees). */
// biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText (the rendered text)
const textOf = (locator: Locator) => locator.innerText();

/** What a frame measures: its own width against its content's, and where each header cell ends. */
type Fit = { scrollWidth: number; clientWidth: number; right: number; headRights: number[]; heads: string[] };

async function tableFits(page: Page): Promise<Fit[]> {
  return page.locator("main .table-wrap").evaluateAll((frames) =>
    frames.map((frame) => ({
      scrollWidth: frame.scrollWidth,
      clientWidth: frame.clientWidth,
      right: frame.getBoundingClientRect().right,
      headRights: [...frame.querySelectorAll("thead th")].map((th) => th.getBoundingClientRect().right),
      heads: [...frame.querySelectorAll("thead th")].map((th) => th.textContent ?? ""),
    })),
  );
}

/** Every column in view: nothing to scroll inside the frame, every header cell inside it. */
function expectEveryColumn(fits: Fit[], heads: string[], where: string): void {
  expect(fits.length, `${where}: one table`).toBeGreaterThan(0);
  const [fit] = fits as [Fit];
  expect(fit.heads, where).toEqual(heads);
  expect(fit.scrollWidth, `${where}: scrolls inside its frame`).toBeLessThanOrEqual(fit.clientWidth);
  for (const [index, right] of fit.headRights.entries())
    expect(right, `${where}: column ${fit.heads[index]} past the frame`).toBeLessThanOrEqual(fit.right + 0.5);
}

/** Where the tabs' links sit and where the page's own content starts (below the tabs). */
async function phoneLayout(page: Page) {
  return page.evaluate(() => {
    const tabs = document.querySelector("nav[aria-label=Project] ul");
    const links = [...document.querySelectorAll("nav[aria-label=Project] a")];
    const first = document.querySelector("nav[aria-label=Project] + *");
    return {
      tops: links.map((link) => Math.round(link.getBoundingClientRect().top)),
      tabsScroll: tabs ? { scrollWidth: tabs.scrollWidth, clientWidth: tabs.clientWidth } : null,
      tabsOverflow: tabs ? getComputedStyle(tabs).overflowX : null,
      contentTop: first ? first.getBoundingClientRect().top : Number.POSITIVE_INFINITY,
      documentWidth: document.documentElement.scrollWidth,
      banner: document.querySelector(".dev-banner")?.textContent ?? "",
    };
  });
}

describe.skipIf(unavailable)("the dashboard fits at 1280 and 390 px", () => {
  let suite: BrowserSuite;
  let browser: Browser;
  let kit: PageKit;
  let key: TestKey;
  let page: Page;
  let base: string;
  const longKey = `fit-${"k".repeat(196)}`;
  const messageIds: string[] = [];

  beforeAll(async () => {
    suite = await startBrowserSuite({
      name: "fit",
      env: {
        DEV_SIGN_IN: "true",
        STATUS_CHECK_INTERVAL_SECONDS: "1",
        MESSAGES_PER_MINUTE: "1000",
        RECIPIENT_MESSAGES_PER_MINUTE: "100",
        RECIPIENT_MESSAGES_PER_DAY: "100",
      },
    });
    ({ browser, kit } = suite);
    ({ key, page } = await claimedProjectWithLiveKey({
      browser,
      kit,
      developer: "Fiona Fit",
      keyName: "ci-bot",
    }));
    base = `/dashboard/projects/${key.project_id}`;
    const call = (path: string, init?: RequestInit) => fetch(`${suite.server.baseUrl}${path}`, init);
    const body = (to: string, code: unknown = "4821") => ({
      to,
      template: "verification_code",
      variables: { code },
      locale: "en",
    });
    // Test mode: one delivered (the 200-character key), one the simulator reports undeliverable.
    for (const [to, idempotencyKey] of [
      ["+995555123456", longKey],
      ["+995500000004", crypto.randomUUID()],
    ] as const) {
      const sent = await call("/v1/messages", sendMessageRequest(key.api_key, idempotencyKey, body(to)));
      expect(sent.status).toBe(201);
      messageIds.push(((await sent.json()) as { id: string }).id);
    }
    // A refusal (an error code in the row), a read, and a verification's check (the longest route).
    expect(
      (
        await call(
          "/v1/messages",
          sendMessageRequest(key.api_key, crypto.randomUUID(), body("+995555123456", "12")),
        )
      ).status,
    ).toBe(400);
    expect(
      (await call(`/v1/messages/${messageIds[0]}`, { headers: { Authorization: `Bearer ${key.api_key}` } }))
        .status,
    ).toBe(200);
    const verifications = verificationClient(call);
    const started = (await (
      await verifications.start(key.api_key, crypto.randomUUID(), { to: "+995555123456" })
    ).json()) as {
      id: string;
      message_id: string;
    };
    expect((await verifications.check(key.api_key, started.id, { code: "000000" })).status).toBe(200);
    messageIds.push(started.message_id);
    await eventually("the three test messages final", async () => {
      const statuses = await Promise.all(
        messageIds.map(async (id) => {
          const read = await call(`/v1/messages/${id}`, {
            headers: { Authorization: `Bearer ${key.api_key}` },
          });
          return ((await read.json()) as { status: string }).status;
        }),
      );
      return statuses.join() === "delivered,undeliverable,delivered";
    });
    await eventually("the request log written", async () => {
      await kit.go(page, `${base}/requests`);
      return (await page.locator("main tbody tr").count()) >= 6;
    });
  }, 180_000);

  afterAll(async () => {
    await suite?.close();
  });

  it("at 1280 px, Messages shows every column without an inner scroll", async () => {
    await page.setViewportSize(DESKTOP);
    await kit.go(page, `${base}/messages`);
    expect(await page.locator("main tbody tr").count()).toBe(3);
    expectEveryColumn(
      await tableFits(page),
      ["Message", "To", "Status", "Mode", "Template", "Segments", "Error", "Created", "Updated"],
      "messages at 1280 px",
    );
    await checkPage(page, "fit-messages");
  });

  it("at 1280 px, Requests shows every column (a 200-character key, the longest route) and each row's link to its message is in view", async () => {
    await page.setViewportSize(DESKTOP);
    await kit.go(page, `${base}/requests`);
    expectEveryColumn(
      await tableFits(page),
      ["Time", "Request", "Route", "Status", "Error", "Idempotency-Key", "ms", "Mode", "Key", "Produced"],
      "requests at 1280 px",
    );
    expect(await textOf(page.locator("main"))).toContain("POST /v1/verifications/{verification_id}/check");
    // The row of the 200-character key: its link to the message is visible, inside the frame and the window.
    const row = page.locator("main tbody tr", { has: page.locator(`[title="${longKey}"]`) });
    expect(await row.count()).toBe(1);
    const produced = row.getByRole("link", { name: messageIds[0] });
    // Down the page if need be (the frame itself has nothing to scroll sideways: measured above).
    await produced.scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.querySelector("main .table-wrap")?.scrollLeft)).toBe(0);
    const box = await produced.boundingBox();
    const frame = await page.locator("main .table-wrap").boundingBox();
    expect(box && frame).toBeTruthy();
    if (!box || !frame) return;
    expect(box.x).toBeGreaterThanOrEqual(frame.x);
    expect(box.x + box.width).toBeLessThanOrEqual(frame.x + frame.width + 0.5);
    expect(box.x + box.width).toBeLessThanOrEqual(DESKTOP.width);
    // Nothing covers it: the element at its centre is the link (or inside it).
    const hit = await produced.evaluate(
      (link, at) => {
        const found = document.elementFromPoint(at.x, at.y);
        return found !== null && link.contains(found);
      },
      { x: box.x + box.width / 2, y: box.y + box.height / 2 },
    );
    expect(hit).toBe(true);
    await checkPage(page, "fit-requests");
  });

  it("at 390 px, the tabs are one scrollable row and the content starts in the first screen", async () => {
    await page.setViewportSize(MOBILE);
    for (const path of ["", "/messages", "/requests", "/keys", "/settings"]) {
      await kit.go(page, `${base}${path}`);
      const layout = await phoneLayout(page);
      const where = `${path || "/"} at 390 px`;
      expect(layout.banner, where).toContain("Development sign-in is on");
      expect(layout.tops.length, where).toBe(8);
      expect(new Set(layout.tops).size, `${where}: tabs on one row`).toBe(1);
      expect(layout.tabsOverflow, where).toBe("auto");
      expect(layout.tabsScroll?.scrollWidth, `${where}: the tabs scroll sideways`).toBeGreaterThan(
        layout.tabsScroll?.clientWidth ?? 0,
      );
      expect(layout.documentWidth, `${where}: the page is not wider than the phone`).toBeLessThanOrEqual(
        MOBILE.width,
      );
      // The content starts within the first half of the first screen (it started ~600 px down before).
      expect(layout.contentTop, `${where}: where the content starts`).toBeLessThan(MOBILE.height / 2);
    }
    // The current tab is scrolled into view on the page that opens it.
    await kit.go(page, `${base}/settings`);
    const current = await page.locator("nav[aria-label=Project] a[aria-current=page]").boundingBox();
    expect(current && current.x + current.width).toBeLessThanOrEqual(MOBILE.width);
    await page.setViewportSize(DESKTOP);
  });

  it("the overview's delivery rate is per mode (the simulator's failures only in the test rate), the charts have a y-axis and an empty state", async () => {
    await page.setViewportSize(DESKTOP);
    await kit.go(page, base);
    const cards = async (label: RegExp) =>
      textOf(page.locator(".card", { has: page.locator(".label", { hasText: label }) }).locator(".value"));
    expect(await cards(/^Delivery rate, live keys$/)).toBe("—");
    // Two delivered (a message and a verification's), one the simulator reported undeliverable.
    expect(await cards(/^Delivery rate, test keys$/)).toBe("66.7 %");
    // The y-axis: the scale's top (3 messages today: a scale to 5) and zero beside each chart.
    const axis = await textOf(page.locator("#chart-status .y-axis"));
    expect(axis.split(/\s+/)).toEqual(["5", "0"]);
    expect((await textOf(page.locator("#chart-segments .y-axis"))).split(/\s+/)).toEqual(["5", "0"]);
    expect(await page.locator("#chart-status .chart-empty").count()).toBe(0);
    // Live keys only: nothing sent live, so each chart says so instead of drawing empty bars.
    await kit.go(page, `${base}?mode=live`);
    expect(await textOf(page.locator("#chart-status .chart-empty"))).toContain(
      "No messages in these 30 days",
    );
    expect(await textOf(page.locator("#chart-segments .chart-empty"))).toContain(
      "No segments in these 30 days",
    );
    expect(await page.locator("#chart-status svg").count()).toBe(0);
    expect(await cards(/^Delivery rate, test keys$/)).toBe("66.7 %");
    await checkPage(page, "fit-overview-live");
  });

  it("the owner names the project on its settings page: the name shows in the list and the header, escaped, and a name too long is refused", async () => {
    await page.setViewportSize(DESKTOP);
    const hostile = `<img src=x onerror=alert(1)> Fit & "Finish"`;
    await kit.go(page, `${base}/settings`);
    await page.getByLabel(/^Project name/).fill(`${"n".repeat(65)}`);
    const refused = await kit.click(page, kit.button(page, "Save the name"));
    expect(refused.status()).toBe(400);
    expect(await textOf(page.getByRole("alert"))).toContain("1 to 64 characters");
    await page.getByLabel(/^Project name/).fill(hostile);
    await kit.click(page, kit.button(page, "Save the name"));
    expect(page.url()).toContain(`${base}/settings`);
    expect(await textOf(page.locator(".project-name"))).toBe(hostile);
    expect(await page.locator("main img").count()).toBe(0);
    await kit.go(page, `${base}/messages`);
    expect(await textOf(page.locator(".project-name"))).toBe(hostile);
    await kit.go(page, "/dashboard/projects");
    const row = page.locator("main tbody tr", { hasText: key.project_id });
    expect(await textOf(row)).toContain(hostile);
    expect(await page.locator("main img").count()).toBe(0);
    await checkPage(page, "fit-projects-named");
  });

  it("send-a-test shows the templates' texts with their placeholders and segment counts; an error has no Markdown backticks and never the typed code", async () => {
    await page.setViewportSize(DESKTOP);
    await kit.go(page, `${base}/try`);
    const preview = page.locator("#templates");
    const text = await textOf(preview);
    expect(text).toContain("Your verification code is {code}. Do not share it with anyone.");
    expect(text).toContain("Your password reset code is {code}. It expires in {minutes} minutes.");
    expect(text).toMatch(/1 segment \(GSM-7\)/);
    await checkPage(page, "fit-try");
    await page.getByLabel(/^code/).fill("12x");
    const refused = await kit.click(page, kit.button(page, "Send test message"));
    expect(refused.status()).toBe(400);
    const alert = await textOf(page.getByRole("alert"));
    expect(alert).toContain("invalid_variables");
    expect(alert).toContain("Variable code must be");
    expect(alert).not.toContain("`");
    expect(
      await page
        .getByRole("alert")
        .locator("code", { hasText: /^code$/ })
        .count(),
    ).toBe(1);
    expect(await page.content()).not.toContain("12x");
    await checkPage(page, "fit-try-refused");
    // Sent: the result says what the message says, with the placeholder, and never the code typed.
    await page.getByLabel(/^code/).fill("48291307");
    const sent = await kit.click(page, kit.button(page, "Send test message"));
    expect(sent.status()).toBe(200);
    const said = await textOf(page.locator("main q"));
    expect(said).toBe("Your verification code is {code}. Do not share it with anyone.");
    expect(await textOf(page.locator("main"))).toContain("1 segment (GSM-7) at most");
    expect(await page.content()).not.toContain("48291307");
    // What a live key would have left for the number (issue 53, item 3): this send counted in both windows.
    const left = /would have (\d+) of (\d+) messages left this minute and (\d+) of (\d+) today/.exec(
      await textOf(page.locator("#live-recipient")),
    );
    const [minuteLeft, minuteLimit, dayLeft, dayLimit] = (left ?? []).slice(1).map(Number);
    expect(minuteLeft).toBeLessThan(Number(minuteLimit));
    expect(dayLeft).toBeLessThan(Number(dayLimit));
  });
});
