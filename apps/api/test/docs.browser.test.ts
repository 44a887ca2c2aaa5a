// Issue 2, point 8: GET /docs renders the API reference in a real browser,
// entirely from our own origin: no request leaves it, and none fails.
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "./harness.ts";
import { chromiumMissing, launchChromium, SCREENSHOT_DIR } from "./support/browser.ts";

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
    page.on("response", (response) => {
      if (response.status() >= 400) failed.push(`${response.url()} ${response.status()}`);
    });

    const consoleErrors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    const response = await page.goto(`${server.baseUrl}/docs`, { waitUntil: "networkidle" });
    expect(response?.status()).toBe(200);
    const sidebar = page.locator("aside, nav").first();
    for (const summary of ["Liveness", "Readiness"])
      await page.getByText(summary).first().waitFor({ timeout: 20_000 });
    // Expand each tag group in the sidebar and find its operations.
    const groups: Array<[string, string[]]> = [
      ["test keys", ["Get an instant test key"]],
      ["messages", ["Send a message", "Read a message"]],
    ];
    for (const [group, summaries] of groups) {
      await sidebar.getByText(group, { exact: true }).first().click();
      for (const summary of summaries) await page.getByText(summary).first().waitFor({ timeout: 10_000 });
    }
    await page.screenshot({ path: join(SCREENSHOT_DIR, "docs.png"), fullPage: false });

    expect(failed).toEqual([]);
    expect(consoleErrors).toEqual([]);
    const foreign = requested.filter(
      (url) => !url.startsWith(server.baseUrl) && !url.startsWith("data:") && !url.startsWith("blob:"),
    );
    expect(foreign).toEqual([]);
    expect(requested).toContain(`${server.baseUrl}/openapi.json`);
    await page.close();
  });
});
