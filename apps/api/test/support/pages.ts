// What every browser suite (claim, dashboard, console) does with a page, once:
// navigate and wait for the document's answer, click, read the rendered text,
// poll; the checks every dashboard and claim page passes (axe-core in light
// and dark, at 390 px no sideways scroll and no id broken across lines, the
// page's action in view on a phone) with its screenshots; and the fixture "a
// claimed project with a live key and a signed-in browser".
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Browser, BrowserContext, Locator, Page, Response as PageResponse } from "playwright-core";
import { expect } from "vitest";
import { createTestKey } from "../harness.ts";
import { SCREENSHOT_DIR } from "./browser.ts";

export const DESKTOP = { width: 1280, height: 900 };
export const MOBILE = { width: 390, height: 844 };

export type TestKey = { api_key: string; project_id: string; claim_url: string; expires_at: string };

/** Ids as the pages show them (and key prefixes): each must stay on one line. */
export const ID_PATTERN =
  /^(?:(?:msg|req|prj|key|vrf|cre|acc)_[0-9a-z]{20,}|sk_(?:test|live)_[A-Za-z0-9_-]{4}…)$/;

const AXE_SOURCE = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** Polls `check` until it holds (key caches, status checks and reloads take a moment). */
export async function eventually(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export type PageKit = ReturnType<typeof pageKit>;

/** Navigation helpers bound to the server under test. */
export function pageKit(baseUrl: string) {
  /** Runs `action` and resolves the main frame's first non-redirect navigation response. */
  async function navigation(page: Page, action: () => Promise<unknown>): Promise<PageResponse> {
    const response = page.waitForResponse(
      (r) =>
        r.request().isNavigationRequest() &&
        r.frame() === page.mainFrame() &&
        (r.status() < 300 || r.status() >= 400),
    );
    await action();
    const result = await response;
    await page.waitForLoadState("load");
    return result;
  }
  return {
    baseUrl,
    navigation,
    click: (page: Page, target: Locator) => navigation(page, () => target.click()),
    go: (page: Page, path: string) => navigation(page, () => page.goto(`${baseUrl}${path}`)),
    button: (page: Page, name: string | RegExp) => page.getByRole("button", { name }),
    link: (page: Page, name: string | RegExp) => page.getByRole("link", { name }),
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText (the rendered text)
    mainText: (page: Page) => page.locator("main").innerText(),
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText (the rendered text)
    headerText: (page: Page) => page.locator("header").innerText(),
  };
}

/** axe-core in the page: no serious or critical violation. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    type Result = { violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> };
    const axe = (
      globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<Result> } }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${JSON.stringify(v.nodes.slice(0, 3).map((n) => n.target))}`);
  });
  expect(violations, `axe on ${name}`).toEqual([]);
}

/**
 * At the current (narrow) viewport: the page does not scroll sideways, and
 * every id on it lies on one line (an inline element broken across lines has
 * one client rectangle per line) and is not cut by its own box. Returns how
 * many ids it measured.
 */
export async function expectIdsWhole(page: Page, name: string): Promise<number> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, `${name} is wider than the viewport`).toBeLessThanOrEqual(0);
  const measured = await page.evaluate((source) => {
    const pattern = new RegExp(source);
    const broken: string[] = [];
    let ids = 0;
    for (const element of document.querySelectorAll("main code, main .mono")) {
      const text = (element.textContent ?? "").trim();
      if (!pattern.test(text)) continue;
      ids++;
      const html = element as HTMLElement;
      if (element.getClientRects().length > 1 || html.scrollWidth > html.clientWidth + 1) broken.push(text);
    }
    return { ids, broken };
  }, ID_PATTERN.source);
  expect(measured.broken, `${name}: ids broken across lines`).toEqual([]);
  return measured.ids;
}

/** On a phone (390 × 844), scrolled to the top: `target` lies wholly inside the viewport. */
export async function expectInViewOnPhone(page: Page, target: Locator, name: string): Promise<void> {
  const original = page.viewportSize() ?? DESKTOP;
  await page.setViewportSize(MOBILE);
  await page.evaluate(() => window.scrollTo(0, 0));
  const box = await target.boundingBox();
  expect(box, `${name}: the action is rendered`).not.toBeNull();
  if (box) {
    expect(box.x, `${name}: left edge`).toBeGreaterThanOrEqual(0);
    expect(box.y, `${name}: top edge`).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width, `${name}: right edge`).toBeLessThanOrEqual(MOBILE.width);
    expect(box.y + box.height, `${name}: bottom edge (no scrolling)`).toBeLessThanOrEqual(MOBILE.height);
  }
  await page.setViewportSize(original);
}

/**
 * The checks every dashboard and claim page passes, and its screenshots
 * (test-output/screenshots/<name>-<desktop|mobile>-<light|dark>.png): axe in
 * both colour schemes at both widths; at 390 px the ids whole.
 */
export async function checkPage(page: Page, name: string): Promise<{ ids: number }> {
  const original = page.viewportSize() ?? DESKTOP;
  let ids = 0;
  for (const [size, viewport] of [
    ["desktop", DESKTOP],
    ["mobile", MOBILE],
  ] as const) {
    await page.setViewportSize(viewport);
    if (size === "mobile") ids = await expectIdsWhole(page, name);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectAccessible(page, `${name} (${size}, ${scheme})`);
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${size}-${scheme}.png`), fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize(original);
  return { ids };
}

/**
 * Claims `key` in `page` as a local developer named `name` (DEV_SIGN_IN) and
 * opens the project in the dashboard. Each claim page's action is in view on
 * a phone; `check` (when given) runs on the landing and claimed pages.
 */
export async function claimAsDeveloper(
  kit: PageKit,
  page: Page,
  key: TestKey,
  name: string,
  check?: (page: Page, step: "claim-landing" | "claim-confirm" | "claimed") => Promise<void>,
): Promise<void> {
  const { navigation, click, button, link, mainText } = kit;
  expect((await navigation(page, () => page.goto(key.claim_url))).status()).toBe(200);
  expect(await page.locator(".dev-banner").textContent()).toContain("Development sign-in is on");
  await expectInViewOnPhone(page, button(page, "Sign in as a local developer"), "claim landing");
  await check?.(page, "claim-landing");
  await page.getByLabel("Your name").fill(name);
  const confirm = await click(page, button(page, "Sign in as a local developer"));
  expect(confirm.status()).toBe(200);
  expect(await mainText(page)).toContain(`signed in with Development sign-in as ${name}`);
  await expectInViewOnPhone(page, button(page, "Claim this project"), "claim confirmation");
  await check?.(page, "claim-confirm");
  const claimed = await click(page, button(page, "Claim this project"));
  expect(claimed.status()).toBe(200);
  expect(await mainText(page)).toContain("Project claimed");
  await expectInViewOnPhone(page, link(page, "Open the project in the dashboard"), "claimed");
  await check?.(page, "claimed");
  const dashboard = await click(page, link(page, "Open the project in the dashboard"));
  expect(dashboard.status()).toBe(200);
  expect(page.url()).toBe(`${kit.baseUrl}/dashboard/projects/${key.project_id}`);
}

/** Signs in to the dashboard as a local developer. */
export async function devSignIn(kit: PageKit, page: Page, name: string): Promise<void> {
  await kit.go(page, "/dashboard/sign-in");
  await page.getByLabel("Your name").fill(name);
  const signedIn = await kit.click(page, kit.button(page, "Sign in as a local developer"));
  expect(signedIn.status()).toBe(200);
}

/** Creates a live key on the project's keys page (named `name` when given); the page shows it once. */
export async function createLiveKey(
  kit: PageKit,
  page: Page,
  projectId: string,
  name?: string,
): Promise<string> {
  await kit.go(page, `/dashboard/projects/${projectId}/keys`);
  if (name) await page.getByLabel(/^Name/).fill(name);
  const created = await kit.click(page, kit.button(page, "Create a live key"));
  expect(created.status()).toBe(200);
  const liveKey = await page.getByLabel(/Live API key/).inputValue();
  expect(liveKey).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
  return liveKey;
}

export type ClaimedProject = { key: TestKey; liveKey: string; page: Page; context: BrowserContext };

/**
 * The fixture the browser suites share: a fresh test key claimed in a new
 * browser context by a local developer, a live key created on its keys page,
 * and that browser left signed in on the project's overview.
 */
export async function claimedProjectWithLiveKey(options: {
  browser: Browser;
  kit: PageKit;
  developer: string;
  keyName?: string;
  /** Run on each claim page (screenshots and checks). */
  check?: Parameters<typeof claimAsDeveloper>[4];
  /** Before the claim (messages sent with the test key, say). */
  beforeClaim?: (key: TestKey) => Promise<void>;
  context?: BrowserContext;
}): Promise<ClaimedProject> {
  const { kit } = options;
  const key = await createTestKey((path, init) => fetch(`${kit.baseUrl}${path}`, init));
  await options.beforeClaim?.(key);
  const context =
    options.context ?? (await options.browser.newContext({ viewport: DESKTOP, acceptDownloads: true }));
  const page = await context.newPage();
  await claimAsDeveloper(kit, page, key, options.developer, options.check);
  const liveKey = await createLiveKey(kit, page, key.project_id, options.keyName);
  await kit.go(page, `/dashboard/projects/${key.project_id}`);
  return { key, liveKey, page, context };
}
