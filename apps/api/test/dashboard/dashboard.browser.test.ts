// The account dashboard in a real browser: Chromium drives the Deno server on
// PostgreSQL, with the two local identity providers of the claim test (fake
// Google and GitHub speaking the real protocols), the development provider,
// and a fake uBill for live sends. The whole journey of issue 13: instant test
// key → claim in the browser → live key from the dashboard → live send →
// the message, its timeline and the balance change → revoke → 401; the
// operator's grant, sender approval and suspension (→ 403); another account
// sees nothing. Screenshots of every page, desktop (1280 px) and mobile
// (390 px), light and dark: test-output/screenshots/dashboard-*.png.
// Each test makes the projects it reads (in the browser, through the kit's
// claim, and through the same domain calls the dashboard's procedures make),
// so each one can fail alone; each checks its own pages and the server's lines
// for a full number, the code, a key or a token.
import type { PrismaDatabase } from "@sms/db/testing";
import {
  actorOf,
  createProjectLiveKey,
  createStore,
  developmentIdentity,
  requestSender,
  revokeProjectKey,
  rollTestKey,
  systemClock,
} from "@sms/domain";
import type { FakeUbill } from "@sms/provider-ubill/testing";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeUser } from "../fakes/fake-page.ts";
import { createTestKey, type ServerProcess, sendMessageRequest } from "../harness.ts";
import {
  type BrowserSuite,
  browserSuiteUnavailable,
  OCTOCAT,
  startBrowserSuite,
} from "../support/browser-suite.ts";
import {
  checkPage,
  claimAsDeveloper as claimInBrowser,
  DESKTOP,
  eventually,
  type PageKit,
  devSignIn as signInAsDeveloper,
  type TestKey,
} from "../support/pages.ts";

const unavailable = await browserSuiteUnavailable("dashboard browser tests");

const ALICE_G: FakeUser = {
  subject: "108234567890123456781",
  email: "alice@example.com",
  name: "Alice Google",
};
const BOB_G: FakeUser = { subject: "108999999999999999991", email: "bob@example.com", name: "Bob Google" };
const OCTO = OCTOCAT;
const CODE = "90817263";
const NUMBER = "+995555123456";
const FREE_CREDITS = 50;

type Key = TestKey;

describe.skipIf(unavailable)("the dashboard in Chromium", () => {
  let suite: BrowserSuite;
  let server: ServerProcess;
  let ubill: FakeUbill;
  let browser: Browser;
  let db: PrismaDatabase;
  let kit: PageKit;
  /** Every API key, claim token and cookie value seen: none may reach the server's output. */
  const secrets = new Set<string>();
  /** Every HTML page the browsers loaded: URL and body. */
  const documents: Array<{ url: string; body: string }> = [];
  const shotNames = new Set<string>();
  /** Script errors in any page (the one script must never fail). */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    suite = await startBrowserSuite({
      name: "dashboard",
      identities: { google: [ALICE_G, BOB_G], github: [OCTO] },
      ubill: {
        brands: [
          { id: 1, name: "SMSGE", approved: true },
          { id: 7, name: "Acme", approved: true },
        ],
      },
      env: {
        CLAIM_FREE_CREDITS: String(FREE_CREDITS),
        // Real providers are configured: the development provider only because this says so.
        DEV_SIGN_IN: "true",
        OPERATOR_IDENTITIES: "dev:olga-ops",
        STATUS_CHECK_INTERVAL_SECONDS: "1",
      },
    });
    ({ server, browser, db, kit } = suite);
    ubill = (suite.ubill as { fake: FakeUbill }).fake;
  }, 120_000);

  afterAll(async () => {
    await suite?.close();
    // Each test checks the lines logged while it ran; the whole output, the last lines too, holds no secret either.
    const output = server?.output.join("\n") ?? "";
    for (const secret of secrets) expect(output).not.toContain(secret);
    expect(output).not.toContain(NUMBER.slice(1));
    expect(output).not.toContain(CODE);
  });

  const api = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);

  async function newKey(): Promise<Key> {
    const key = await createTestKey(api);
    secrets.add(key.api_key);
    secrets.add(key.claim_url.slice(key.claim_url.lastIndexOf("/") + 1));
    return key;
  }

  const body = { to: NUMBER, template: "verification_code", variables: { code: CODE }, locale: "en" };
  const send = (apiKey: string) => api("/v1/messages", sendMessageRequest(apiKey, crypto.randomUUID(), body));
  const read = (apiKey: string, id: string) =>
    api(`/v1/messages/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } });

  async function newPage(context?: BrowserContext): Promise<Page> {
    const page = await (context ?? (await browser.newContext({ viewport: DESKTOP }))).newPage();
    page.on("response", async (response) => {
      if (!response.request().isNavigationRequest()) return;
      if (!(response.headers()["content-type"] ?? "").startsWith("text/html")) return;
      if (!response.url().startsWith(server.baseUrl)) return;
      documents.push({ url: response.url(), body: await response.text().catch(() => "") });
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    return page;
  }

  const navigation: PageKit["navigation"] = (...args) => kit.navigation(...args);
  const click: PageKit["click"] = (...args) => kit.click(...args);
  const go: PageKit["go"] = (...args) => kit.go(...args);
  const button: PageKit["button"] = (...args) => kit.button(...args);
  const link: PageKit["link"] = (...args) => kit.link(...args);
  const mainText: PageKit["mainText"] = (...args) => kit.mainText(...args);
  const headerText: PageKit["headerText"] = (...args) => kit.headerText(...args);

  async function rememberCookies(context: BrowserContext) {
    const cookies = await context.cookies();
    for (const cookie of cookies) if (cookie.value) secrets.add(cookie.value);
    return cookies;
  }

  /**
   * The current page, desktop and mobile, light and dark (screenshots), with
   * the checks every page passes: axe in both schemes, at 390 px no sideways
   * scroll and every id on one line.
   */
  async function shots(page: Page, name: string): Promise<void> {
    shotNames.add(name);
    await checkPage(page, `dashboard-${name}`);
  }

  /** Claims `key` in `page` as a local developer named `name`, and opens the project in the dashboard. */
  async function claimAsDeveloper(page: Page, key: Key, name: string, shotPrefix?: string): Promise<void> {
    await claimInBrowser(kit, page, key, name, async (claimPage, step) => {
      if (shotPrefix) await shots(claimPage, `${shotPrefix}-${step}`);
    });
    await rememberCookies(page.context());
  }

  /** Signs in to the dashboard as a local developer. */
  async function devSignIn(page: Page, name: string): Promise<void> {
    await signInAsDeveloper(kit, page, name);
    await rememberCookies(page.context());
  }

  const tab = (page: Page, name: string) =>
    click(page, page.getByRole("navigation", { name: "Project" }).getByRole("link", { name }));

  /** Where a test's pages, the server's lines, the script errors and the secrets seen begin. */
  type Mark = { documents: number; output: number; errors: number; secrets: number };
  const mark = (): Mark => ({
    documents: documents.length,
    output: server.output.length,
    errors: pageErrors.length,
    secrets: secrets.size,
  });

  /**
   * What every test checks of its own pages and of the server's lines since
   * `from`: each page it names was screenshotted; no script error; no page
   * holds the full number or the code; each API key appears in at most one page
   * (the one that showed it once); no line holds a key, a token, a cookie, the
   * number, the code or the uBill key.
   */
  function expectNothingLeaked(
    from: Mark,
    expected: { shots: string[]; documents: number; secrets: number },
  ) {
    for (const name of expected.shots) expect(shotNames.has(name), name).toBe(true);
    expect(pageErrors.slice(from.errors)).toEqual([]);
    const loaded = documents.slice(from.documents);
    expect(loaded.length).toBeGreaterThan(expected.documents);
    const digits = NUMBER.slice(1);
    for (const { url, body } of loaded) {
      expect(body, url).not.toContain(digits);
      expect(body, url).not.toContain(CODE);
    }
    for (const secret of secrets) {
      if (!/^sk_/.test(secret)) continue;
      const shown = documents.filter((document) => document.body.includes(secret)).length;
      expect(shown, secret.slice(0, 12)).toBeLessThanOrEqual(1);
    }
    expect(secrets.size - from.secrets).toBeGreaterThan(expected.secrets);
    const output = server.output.slice(from.output).join("\n");
    for (const secret of secrets) expect(output).not.toContain(secret);
    expect(output).not.toContain(digits);
    expect(output).not.toContain(CODE);
    expect(output).not.toContain(suite.ubill?.apiKey);
  }

  /** The account holder of the projects made below, as the dashboard names her in the audit log. */
  const ALICE_DEV = "Alice Dev";
  const aliceDev = () => actorOf(developmentIdentity(ALICE_DEV)!);

  /** A new test key's project, claimed by Alice Dev in the browser (the kit's claim, no screenshots). */
  async function claimedByAlice(beforeClaim?: (key: Key) => Promise<void>): Promise<Key> {
    const key = await newKey();
    await beforeClaim?.(key);
    const page = await newPage();
    await claimAsDeveloper(page, key, ALICE_DEV);
    await page.context().close();
    return key;
  }

  /**
   * What the journey leaves for the operator, made through the dashboard's own
   * domain calls as Alice Dev: a claimed project whose live key sent one
   * delivered message (balance 49) and was revoked, whose test key was rolled,
   * and whose sender request for "Acme" waits for the operator.
   */
  async function aliceProjectWithHistory(): Promise<{ key: Key; rolledKey: string }> {
    const key = await claimedByAlice();
    const projectId = key.project_id;
    const deps = { store: createStore(db), clock: systemClock };
    const { accountId } = await db.prisma.project.findUniqueOrThrow({ where: { id: projectId } });
    expect(accountId).not.toBeNull();
    const viewer = { accountId, actor: aliceDev() };

    const live = await createProjectLiveKey(deps, { viewer, projectId });
    if (!live.ok) throw new Error(`no live key: ${live.code}`);
    secrets.add(live.apiKey);
    const sent = await send(live.apiKey);
    expect(sent.status).toBe(201);
    const { id } = (await sent.json()) as { id: string };
    const { providerRef } = await db.prisma.message.findFirstOrThrow({ where: { id } });
    ubill.setReport(providerRef!, "1");
    await eventually(
      "delivered",
      async () => ((await (await read(live.apiKey, id)).json()) as { status: string }).status === "delivered",
    );
    expect(await revokeProjectKey(deps, { viewer, projectId, keyId: live.keyId })).toMatchObject({
      ok: true,
    });

    const rolled = await rollTestKey(deps, { viewer, projectId });
    if (!rolled.ok) throw new Error(`no rolled key: ${rolled.code}`);
    secrets.add(rolled.apiKey);
    const asked = await requestSender(deps, {
      viewer,
      projectId,
      name: "Acme",
      purpose: "Sign-in codes for the Acme shop",
    });
    expect(asked.ok).toBe(true);
    return { key, rolledKey: rolled.apiKey };
  }

  it("the journey: claim as a local developer → live key → live send → message, timeline, balance → revoke → 401", async () => {
    const from = mark();
    const key = await newKey();
    // Two test messages before the claim, then the claim in the browser.
    for (let i = 0; i < 2; i++) expect((await send(key.api_key)).status).toBe(201);
    const page = await newPage();
    await claimAsDeveloper(page, key, ALICE_DEV, "journey");

    // The overview: state, 50 free credits, the charts.
    const overview = await mainText(page);
    expect(overview).toContain("Active");
    expect(overview).toMatch(/Credit balance\s+50/);
    // Usage by status and segments drawn; (issue 22) verifications approved and not: none yet, said in words.
    expect(await page.locator("figure.chart svg").count()).toBe(2);
    expect(await page.locator("#chart-conversion .chart-empty").textContent()).toContain(
      "No verifications in these 30 days",
    );
    expect(overview).toContain("Verifications, last 30 days");
    await shots(page, "overview");

    // The projects list.
    await click(
      page,
      page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Projects" }),
    );
    expect(await mainText(page)).toContain(key.project_id);
    await shots(page, "projects");

    // Keys: a live key, created with the keyboard.
    await go(page, `/dashboard/projects/${key.project_id}/keys`);
    await shots(page, "keys");
    const createButton = button(page, "Create a live key");
    let tabs = 0;
    while (!(await createButton.evaluate((element) => element === document.activeElement)) && tabs++ < 40) {
      await page.keyboard.press("Tab");
    }
    expect(tabs).toBeLessThan(40);
    const created = await navigation(page, () => page.keyboard.press("Enter"));
    expect(created.status()).toBe(200);
    expect(await mainText(page)).toContain("this is the only time the whole key is shown");
    const liveKey = await page.getByLabel(/Live API key/).inputValue();
    expect(liveKey).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
    secrets.add(liveKey);
    // The copy button appears with the script, and copies.
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.baseUrl });
    await button(page, "Copy").click();
    await expect.poll(() => button(page, "Copied").count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(liveKey);
    await shots(page, "new-live-key");

    // A live send through the fake uBill, with the key from the page.
    const ubillSendsBefore = ubill.sends().length;
    const sent = await send(liveKey);
    expect(sent.status).toBe(201);
    const message = (await sent.json()) as { id: string; status: string; to: string };
    expect(message).toMatchObject({ status: "submitted", to: "+9955••••••56" });
    expect(ubill.sends()).toHaveLength(ubillSendsBefore + 1);
    const { providerRef } = await db.prisma.message.findFirstOrThrow({ where: { id: message.id } });
    ubill.setReport(providerRef!, "1");
    await eventually(
      "delivered",
      async () =>
        ((await (await read(liveKey, message.id)).json()) as { status: string }).status === "delivered",
    );

    // The message in the log, and its timeline.
    await tab(page, "Messages");
    const log = await mainText(page);
    expect(log).toContain(message.id);
    expect(log).toContain("+9955••••••56");
    await shots(page, "messages");
    await go(page, `/dashboard/projects/${key.project_id}/messages?mode=live`);
    expect(await page.locator("tbody tr").count()).toBe(1);
    await click(page, page.getByRole("link", { name: message.id }));
    const detail = await mainText(page);
    expect(detail).toMatch(/queued[\s\S]*submitted[\s\S]*delivered/);
    expect(await page.locator("ol.timeline li").count()).toBe(3);
    expect(detail).toMatch(/reservation\s+-1/);
    await shots(page, "message");

    // The balance changed by the message's one segment, and the ledger says why.
    await tab(page, "Credits");
    const credits = await mainText(page);
    expect(credits).toMatch(/Balance\s+49/);
    expect(credits).toContain("Matches the balance");
    expect(credits).toContain(message.id);
    await shots(page, "credits");
    await tab(page, "Overview");
    // Per mode (issue 54): the one live message was delivered; the test keys' rate is apart.
    const rates = await mainText(page);
    expect(rates).toMatch(/Delivery rate, live keys\s+100\.0 %/);
    expect(rates).toMatch(/Delivery rate, test keys\s+(?:[\d.]+ %|—)/);

    // Revoke the live key (with a confirmation step): it gets 401.
    await tab(page, "API keys");
    await click(page, page.getByRole("link", { name: `Revoke ${liveKey.slice(0, 12)}…` }));
    expect(await mainText(page)).toContain("Revoke this key?");
    await shots(page, "revoke-confirm");
    const revoked = await click(page, button(page, `Revoke ${liveKey.slice(0, 12)}…`));
    expect(revoked.status()).toBe(200);
    expect(await mainText(page)).toContain("The key was revoked");
    await eventually("the revoked key's 401", async () => (await send(liveKey)).status === 401);
    expect((await read(liveKey, message.id)).status).toBe(401);

    // Roll the test key: a new one works, the old one gets 401.
    await click(page, link(page, "Roll the test key…"));
    await shots(page, "roll-confirm");
    await click(page, button(page, "Roll the test key"));
    const rolledKey = await page.getByLabel(/Test API key/).inputValue();
    expect(rolledKey).toMatch(/^sk_test_/);
    secrets.add(rolledKey);
    await shots(page, "new-test-key");
    expect(await mainText(page)).toContain(`Revoked: ${key.api_key.slice(0, 12)}…`);
    await eventually("the old test key's 401", async () => (await send(key.api_key)).status === 401);
    expect((await send(rolledKey)).status).toBe(201);

    // Ask for a sender name: pending until the operator decides.
    await go(page, `/dashboard/projects/${key.project_id}/sender`);
    await page.getByLabel(/^Name/).fill("Acme");
    await page.getByLabel("What it is for").fill("Sign-in codes for the Acme shop");
    await click(page, button(page, "Request this name"));
    expect(await mainText(page)).toContain("Your request was sent to the operator");
    expect(await mainText(page)).toMatch(/Acme[\s\S]*waiting for the operator/);
    await shots(page, "sender");
    await page.context().close();

    expect(server.output.slice(from.output).join("\n")).toContain(
      '"route":"/dashboard/projects/{project_id}/keys/live"',
    );
    expectNothingLeaked(from, {
      shots: [
        "journey-claim-landing",
        "journey-claim-confirm",
        "journey-claimed",
        "overview",
        "projects",
        "keys",
        "new-live-key",
        "messages",
        "message",
        "credits",
        "revoke-confirm",
        "roll-confirm",
        "new-test-key",
        "sender",
      ],
      documents: 15,
      secrets: 4,
    });
  }, 300_000);

  it("the operator: finds the project, grants credits (idempotent), approves the sender, suspends (→ 403), reads the audit log", async () => {
    const from = mark();
    const { key, rolledKey } = await aliceProjectWithHistory();
    const page = await newPage();
    await devSignIn(page, "Olga Ops");
    await click(page, page.getByRole("link", { name: "Operator" }));
    await page.getByLabel(/Find a project/).fill(key.api_key.slice(0, 12));
    await click(page, button(page, "Find"));
    expect(await mainText(page)).toContain(key.project_id);
    expect(await mainText(page)).toMatch(/Acme[\s\S]*Sign-in codes for the Acme shop/);
    // The latest actions, in words (the account holder's, made above).
    const home = await mainText(page);
    expect(home).toMatch(/Latest actions[\s\S]*dev:alice-dev: Asked for the sender name “Acme”/);
    expect(home).toContain("Rolled the test key");
    expect(home).toMatch(/Revoked the live key key_/);
    expect(home).not.toMatch(/[{}]/);
    await shots(page, "operator-home");
    // Opening a project writes no audit row: only actions do.
    const auditRows = () => db.prisma.auditEntry.count({ where: { projectId: key.project_id } });
    const rowsBefore = await auditRows();
    await click(page, page.getByRole("link", { name: key.project_id }).first());
    await shots(page, "operator-project");
    await go(page, `/dashboard/operator/projects/${key.project_id}`);
    expect(await auditRows()).toBe(rowsBefore);

    // The daily credit cap, set and cleared by the operator.
    expect(await mainText(page)).toMatch(/Daily credit cap\s+None/);
    await page.getByLabel(/Credits a UTC day/).fill("25");
    await click(page, button(page, "Set the daily cap"));
    expect(await mainText(page)).toContain("The daily credit cap was saved.");
    expect(await mainText(page)).toMatch(/Daily credit cap\s+25/);
    expect(
      (await db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } })).dailyCreditCap,
    ).toBe(25);
    // (The field takes digits only; zero passes the browser's check and is refused by the service.)
    await page.getByLabel(/Credits a UTC day/).fill("0");
    const badCap = await click(page, button(page, "Set the daily cap"));
    expect(badCap.status()).toBe(409);
    expect(await mainText(page)).toContain(
      "The daily credit cap must be a whole number from 1 to 1,000,000, or empty for no cap.",
    );
    await go(page, `/dashboard/operator/projects/${key.project_id}`);
    await page.getByLabel(/Credits a UTC day/).fill("");
    await click(page, button(page, "Set the daily cap"));
    expect(await mainText(page)).toContain("The daily credit cap was removed");
    expect(
      (await db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } })).dailyCreditCap,
    ).toBeNull();
    const capRows = await db.prisma.auditEntry.findMany({
      where: { projectId: key.project_id, action: "project.spending_set" },
      orderBy: { createdAt: "asc" },
    });
    expect(capRows.map((row) => [row.actor, row.details])).toEqual([
      ["dev:olga-ops", { daily_credit_cap: 25 }],
      ["dev:olga-ops", { daily_credit_cap: null }],
    ]);

    // Paid credits with a reference; the same reference again changes nothing.
    for (const notice of [
      "The credits were granted.",
      "That reference was already granted; nothing changed.",
    ]) {
      await page.getByLabel("Credits", { exact: true }).fill("100");
      await page.getByLabel(/Reference/).fill("INV-2026-7");
      await click(page, button(page, "Grant credits"));
      expect(await mainText(page)).toContain(notice);
    }
    const project = await db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } });
    expect(project).toMatchObject({ creditBalance: 149, hasPaidCredits: true });

    // A live key from the operator's view, shown once.
    await click(page, button(page, "Create a live key"));
    const operatorKey = await page.getByLabel(/Live API key/).inputValue();
    secrets.add(operatorKey);
    await shots(page, "operator-new-key");
    await click(page, link(page, "Back to the project"));
    await click(page, page.getByRole("link", { name: `Revoke ${operatorKey.slice(0, 12)}…` }));
    await shots(page, "operator-revoke-confirm");
    await click(page, button(page, `Revoke ${operatorKey.slice(0, 12)}…`));
    expect(await mainText(page)).toContain("The key was revoked");

    // Approve the sender request: checked against the (fake) uBill brand list. (The journey's project
    // may have asked for "Acme" too: this project's request card.)
    await go(page, "/dashboard/operator");
    await click(
      page,
      page
        .locator("section.panel")
        .filter({ hasText: key.project_id })
        .getByRole("button", { name: "Approve Acme" }),
    );
    expect(await mainText(page)).toContain("The sender name was approved");
    expect(await db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } })).toMatchObject({
      sender: "Acme",
      senderBrandId: 7,
    });

    // Suspend: every key of the project gets 403.
    await go(page, `/dashboard/operator/projects/${key.project_id}`);
    await page.getByLabel("Reason").fill("Abuse report #12");
    await click(page, button(page, "Suspend the project"));
    expect(await mainText(page)).toContain("The project is suspended");
    await eventually("the suspended project's 403", async () => (await send(rolledKey)).status === 403);
    // No live key for a suspended project: the refusal says why.
    const refused = await click(page, button(page, "Create a live key"));
    expect(refused.status()).toBe(409);
    expect(await mainText(page)).toContain("This project is suspended");
    await shots(page, "action-refused");
    await go(page, `/dashboard/operator/projects/${key.project_id}`);

    // The audit log: the same rows the command-line tool writes, with the signed-in identities.
    await click(page, link(page, "This project's audit log"));
    const audit = await mainText(page);
    for (const action of [
      "project.suspended",
      "project.spending_set",
      "sender.request_approved",
      "sender.set",
      "credits.granted",
      "sender.requested",
      "test_key.rolled",
      "api_key.revoked",
      "api_key.created",
    ]) {
      expect(audit, action).toContain(action);
    }
    expect(audit).toContain("dev:olga-ops");
    expect(audit).toContain("dev:alice-dev");
    expect(audit).toContain("Abuse report #12");
    // In words, not JSON.
    expect(audit).toContain("Suspended the project: “Abuse report #12”");
    expect(audit).toContain("Set the daily credit cap to 25 credits");
    expect(audit).toContain("Granted 100 paid credits (reference “INV-2026-7”)");
    expect(audit).not.toMatch(/[{}]/);
    await shots(page, "operator-audit");
    const rows = await db.prisma.auditEntry.findMany({ where: { projectId: key.project_id } });
    expect(rows.filter((row) => row.action === "credits.granted").map((row) => row.actor)).toEqual([
      "dev:olga-ops",
      "dev:olga-ops",
    ]);

    // The account holder sees the suspension and the new sender.
    const holder = await newPage();
    await devSignIn(holder, ALICE_DEV);
    await go(holder, `/dashboard/projects/${key.project_id}`);
    const overview = await mainText(holder);
    expect(overview).toContain("This project is suspended");
    expect(overview).toMatch(/Sender name\s+Acme/);
    expect(overview).toMatch(/Credit balance\s+149/);
    await shots(holder, "overview-suspended");
    await holder.context().close();
    await page.context().close();

    expectNothingLeaked(from, {
      shots: [
        "operator-home",
        "operator-project",
        "operator-new-key",
        "operator-revoke-confirm",
        "action-refused",
        "operator-audit",
        "overview-suspended",
      ],
      documents: 15,
      secrets: 4,
    });
  }, 300_000);

  it("GitHub and Google: claim, land in the dashboard, sign out, sign in again from the dashboard", async () => {
    const from = mark();
    for (const [provider, user, name] of [
      ["GitHub", OCTO, "The Octocat"],
      ["Google", ALICE_G, "Alice Google"],
    ] as const) {
      const key = await newKey();
      const page = await newPage();
      await navigation(page, () => page.goto(key.claim_url));
      await click(page, button(page, `Sign in with ${provider}`));
      await click(page, button(page, `Continue as ${user.email}`));
      await click(page, button(page, "Claim this project"));
      await click(page, link(page, "Open the project in the dashboard"));
      expect(page.url()).toBe(`${server.baseUrl}/dashboard/projects/${key.project_id}`);
      expect(await headerText(page)).toContain(`${name} (${provider})`);
      await rememberCookies(page.context());

      // Another tab of the same browser stays open on the keys page.
      const other = await newPage(page.context());
      await go(other, `/dashboard/projects/${key.project_id}/keys`);

      await click(page, button(page, "Sign out"));
      expect(page.url()).toBe(`${server.baseUrl}/dashboard/sign-in?notice=signed_out`);

      // The other tab's form, sent after signing out, changes nothing.
      const ended = await click(other, button(other, "Create a live key"));
      expect(ended.status()).toBe(401);
      expect(await mainText(other)).toContain("Your session has ended");
      if (provider === "GitHub") await shots(other, "session-ended");
      await other.close();
      expect(await db.prisma.apiKey.count({ where: { projectId: key.project_id, mode: "live" } })).toBe(0);
      expect((await page.context().cookies()).map((cookie) => cookie.name)).not.toContain("sms_dashboard");
      if (provider === "GitHub") await shots(page, "sign-in");

      // Straight to a project page: sent to sign in, and back there afterwards.
      await go(page, `/dashboard/projects/${key.project_id}/credits`);
      expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
      await click(page, button(page, `Sign in with ${provider}`));
      const back = await click(page, button(page, `Continue as ${user.email}`));
      expect(back.status()).toBe(200);
      expect(page.url()).toBe(`${server.baseUrl}/dashboard/projects/${key.project_id}/credits`);
      expect(await mainText(page)).toMatch(new RegExp(`Balance\\s+${FREE_CREDITS}`));
      await rememberCookies(page.context());
      await page.context().close();
    }
    expectNothingLeaked(from, { shots: ["session-ended", "sign-in"], documents: 10, secrets: 4 });
  }, 120_000);

  it("another account sees none of it, and a cancelled sign-in says so", async () => {
    const from = mark();
    // Alice Dev's project with a message in it (sent with the test key before the claim).
    let messageId = "";
    const key = await claimedByAlice(async (testKey) => {
      const sent = await send(testKey.api_key);
      expect(sent.status).toBe(201);
      messageId = ((await sent.json()) as { id: string }).id;
    });
    const page = await newPage();
    await go(page, "/dashboard/sign-in");
    await click(page, button(page, "Sign in with Google"));
    await click(page, button(page, `Continue as ${BOB_G.email}`));
    expect(await mainText(page)).toContain("No projects yet");
    await shots(page, "projects-empty");
    for (const path of [
      `/dashboard/projects/${key.project_id}`,
      `/dashboard/projects/${key.project_id}/keys`,
      `/dashboard/projects/${key.project_id}/messages`,
      `/dashboard/projects/${key.project_id}/messages/${messageId}`,
      `/dashboard/projects/${key.project_id}/credits`,
      `/dashboard/projects/${key.project_id}/sender`,
    ]) {
      const response = await go(page, path);
      expect(response.status(), path).toBe(404);
      expect(await mainText(page)).not.toContain("+9955");
    }
    await shots(page, "not-found");
    const operator = await go(page, "/dashboard/operator");
    expect(operator.status()).toBe(403);
    await shots(page, "forbidden");
    await page.context().close();

    const cancelled = await newPage();
    await go(cancelled, "/dashboard/sign-in");
    await click(cancelled, button(cancelled, "Sign in with GitHub"));
    const answer = await click(cancelled, button(cancelled, "Cancel"));
    expect(answer.status()).toBe(200);
    expect(await mainText(cancelled)).toContain("You cancelled signing in with GitHub.");
    await cancelled.context().close();
    expectNothingLeaked(from, {
      shots: ["projects-empty", "not-found", "forbidden"],
      documents: 8,
      secrets: 2,
    });
  }, 60_000);
});
