// Issue 2, point 8 and issue 14: GET /docs renders the guide pages and the API
// reference in a real browser, entirely from our own origin (no request
// leaves it, and none fails), with the bundle compressed and cached.
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "../harness.ts";
import { chromiumMissing, launchChromium, SCREENSHOT_DIR } from "../support/browser.ts";

const skip = chromiumMissing();

describe.skipIf(skip)("GET /docs in Chromium", () => {
  let server: ServerProcess;
  let browser: Browser;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ backend: "pglite" }), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  it("renders every operation with no failed or foreign request", async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const failed: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    page.on("requestfailed", (request) => failed.push(`${request.url()} ${request.failure()?.errorText}`));
    let bundleEncoding: string | undefined;
    page.on("response", async (response) => {
      if (response.status() >= 400) failed.push(`${response.url()} ${response.status()}`);
      if (response.url().includes("/docs/assets/"))
        bundleEncoding = (await response.allHeaders())["content-encoding"];
    });

    const consoleErrors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    const response = await page.goto(`${server.baseUrl}/docs`, { waitUntil: "networkidle" });
    expect(response?.status()).toBe(200);
    // Issue 25 L7: never framed, no inline or eval'd script beyond the page's own (by hash).
    const csp = (await response?.allHeaders())?.["content-security-policy"] ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    const scriptSrc = csp.split(";").find((directive) => directive.trim().startsWith("script-src")) ?? "";
    expect(scriptSrc).not.toContain("'unsafe-inline'");
    expect(scriptSrc).not.toContain("'unsafe-eval'");
    expect(scriptSrc).toMatch(/'sha256-[A-Za-z0-9+/]+=*'/);
    const sidebar = page.locator("aside, nav").first();
    // The guide pages come first, each rendered from its Markdown.
    const guides: Array<[string, string]> = [
      ["Getting started", "Three requests: get a key, send a code, read the outcome."],
      ["Test mode and the simulator", "+995500000003"],
      ["Idempotency and retries", "Idempotent-Replayed: true"],
      ["Errors", "idempotency_key_reused"],
      ["Polling and the status lifecycle", "double the wait after each read"],
      ["Limits", "payload_too_large"],
      ["Verify a phone number", "Let the user in only on"],
    ];
    for (const [title, text] of guides) {
      await sidebar.getByText(title, { exact: true }).first().click();
      await page.getByRole("heading", { name: title }).first().waitFor({ timeout: 20_000 });
      await page.getByText(text).first().waitFor({ timeout: 10_000 });
    }
    const labels = (await sidebar.textContent()) ?? "";
    const order = ["Getting started", "Limits", "Messages", "Verifications", "Test keys", "Health"].map(
      (label) => labels.indexOf(label),
    );
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // Expand each tag group in the sidebar and find its operations.
    const groups: Array<[string, string[]]> = [
      ["Messages", ["Send a message", "Read a message"]],
      ["Verifications", ["Start a verification", "Check a code", "Read a verification"]],
      ["Test keys", ["Get an instant test key"]],
      ["Health", ["Liveness", "Readiness"]],
    ];
    for (const [group, summaries] of groups) {
      await sidebar.getByText(group, { exact: true }).first().click();
      for (const summary of summaries) await page.getByText(summary).first().waitFor({ timeout: 10_000 });
    }
    // The curl sample makes a new Idempotency-Key each time it runs (issue 54: Scalar's generated one
    // carried the parameter's fixed example, so a copied script replayed its first message), and the
    // API key scheme is preselected.
    await page.getByText("Send a message").first().click();
    await page.getByText("Idempotency-Key: $(od -An -N16 -tx1 /dev/urandom").first().waitFor({ timeout: 10_000 });
    expect(await page.getByText(/Idempotency-Key: [0-9a-f]{8}-[0-9a-f]{4}-/).count()).toBe(0);
    expect(await page.getByText("No authentication selected").count()).toBe(0);
    await page.screenshot({ path: join(SCREENSHOT_DIR, "docs.png"), fullPage: false });

    expect(failed).toEqual([]);
    expect(consoleErrors).toEqual([]);
    const foreign = requested.filter(
      (url) => !url.startsWith(server.baseUrl) && !url.startsWith("data:") && !url.startsWith("blob:"),
    );
    expect(foreign).toEqual([]);
    expect(requested).toContain(`${server.baseUrl}/openapi.json`);
    // The bundle came compressed, under a URL that names its content.
    const bundle = requested.find((url) => url.includes("/docs/assets/"));
    expect(bundle).toMatch(/\/docs\/assets\/api-reference\.[\w-]{16}\.js$/);
    expect(bundleEncoding).toBe("gzip");
    await page.close();
  });

  it("serves the reference bundle compressed, cached for a year and revalidated by ETag", async () => {
    const html = await (await fetch(`${server.baseUrl}/docs`)).text();
    const path = /src="(\/docs\/assets\/[^"]+)"/.exec(html)?.[1] as string;
    const sizes: Record<string, number> = {};
    for (const encoding of ["gzip", "identity"]) {
      const response = await fetch(`${server.baseUrl}${path}`, { headers: { "Accept-Encoding": encoding } });
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(response.headers.get("vary")).toBe("Accept-Encoding");
      sizes[encoding] = Number(response.headers.get("content-length"));
      // fetch decodes the body: every encoding carries the same script.
      expect((await response.text()).length).toBeGreaterThan(1_000_000);
      expect(response.headers.get("content-encoding")).toBe(encoding === "identity" ? null : encoding);
      const etag = response.headers.get("etag") as string;
      const again = await fetch(`${server.baseUrl}${path}`, {
        headers: { "Accept-Encoding": encoding, "If-None-Match": etag },
      });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe("");
    }
    expect(sizes.gzip).toBeLessThan((sizes.identity as number) / 3);
    // Brotli is not offered (docs.ts): a client that accepts only br gets the
    // script as it is, one that prefers br but accepts gzip gets gzip.
    for (const [accept, expected] of [
      ["br", null],
      ["br;q=1, gzip;q=0.5", "gzip"],
    ] as const) {
      const response = await fetch(`${server.baseUrl}${path}`, { headers: { "Accept-Encoding": accept } });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-encoding")).toBe(expected);
      expect((await response.text()).length).toBeGreaterThan(1_000_000);
    }
    const unknown = await fetch(`${server.baseUrl}/docs/assets/api-reference.js`);
    expect(unknown.status).toBe(404);
  });
});
