// Claiming a test project in a real browser (spec 1.4, 2.3, 4.1): Chromium
// drives the Deno server through the whole flow against two local identity
// providers speaking the real protocols on loopback (OpenID Connect through
// oauth2-mock-server, GitHub's OAuth web flow through a small fake).
// Every claim page wears the dashboard's frame (header, brand, docs link) and
// passes the checks of every page (axe in light and dark, at 390 px nothing
// sideways and ids whole), its action in view on a phone. Screenshots of every
// page, desktop and mobile, light and dark: test-output/screenshots/claim-*.png.
import { join } from "node:path";
import type { PrismaDatabase } from "@sms/db/testing";
import type { Browser, BrowserContext, Cookie, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeGitHub, FakeGitHubUser } from "../fakes/fake-github.ts";
import type { FakeGoogle } from "../fakes/fake-google.ts";
import type { FakeUser } from "../fakes/fake-page.ts";
import { createTestKey, type ServerProcess, sendMessageRequest } from "../harness.ts";
import { SCREENSHOT_DIR } from "../support/browser.ts";
import {
  type BrowserSuite,
  browserSuiteUnavailable,
  OCTOCAT,
  startBrowserSuite,
} from "../support/browser-suite.ts";
import { checkPage, expectInViewOnPhone, type PageKit, type TestKey } from "../support/pages.ts";

// The test moves claim links past their expiry in the server's database, so
// it needs PostgreSQL (in CI, availableBackends() insists on it).
const unavailable = await browserSuiteUnavailable("claim browser tests");

const ALICE: FakeUser = {
  subject: "108234567890123456789",
  email: "alice@example.com",
  name: "Alice Example",
};
const BOB: FakeUser = { subject: "108999999999999999999", email: "bob@example.com", name: "Bob Example" };
const OCTO = OCTOCAT;
const HUBOT: FakeGitHubUser = {
  id: 1031,
  login: "hubot",
  subject: "1031",
  email: "hubot@example.com",
  name: "",
};
const FREE_CREDITS = 50;

type Key = TestKey;

describe.skipIf(unavailable)("claiming a test project in Chromium", () => {
  let suite: BrowserSuite;
  let server: ServerProcess;
  let google: FakeGoogle;
  let github: FakeGitHub;
  let browser: Browser;
  let db: PrismaDatabase;
  let kit: PageKit;
  /** Secrets that must never reach the server's output. */
  const secrets = new Set<string>();

  beforeAll(async () => {
    suite = await startBrowserSuite({
      name: "claim",
      identities: { google: [ALICE, BOB], github: [OCTO, HUBOT] },
      env: { CLAIM_FREE_CREDITS: String(FREE_CREDITS) },
    });
    ({ server, browser, db, kit } = suite);
    google = suite.google as FakeGoogle;
    github = suite.github as FakeGitHub;
  }, 120_000);

  afterAll(async () => {
    await suite?.close();
  });

  const api = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);
  const tokenOf = (key: Key) => key.claim_url.slice(key.claim_url.lastIndexOf("/") + 1);

  async function newKey(): Promise<Key> {
    const key = await createTestKey(api);
    secrets.add(tokenOf(key));
    secrets.add(key.api_key);
    return key;
  }

  async function send(key: Key, to: string): Promise<Record<string, unknown>> {
    const response = await api(
      "/v1/messages",
      sendMessageRequest(key.api_key, crypto.randomUUID(), {
        to,
        template: "verification_code",
        variables: { code: "4821" },
        locale: "en",
      }),
    );
    expect(response.status).toBe(201);
    return (await response.json()) as Record<string, unknown>;
  }

  /** One of our claim pages: the checks of every page, and its screenshots. */
  async function shot(page: Page, name: string): Promise<void> {
    await checkPage(page, `claim-${name}`);
  }

  /** A (fake) identity provider's page: only a screenshot, it is not ours to check. */
  async function providerShot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(SCREENSHOT_DIR, `claim-${name}.png`), fullPage: true });
  }

  const navigation: PageKit["navigation"] = (...args) => kit.navigation(...args);
  const click: PageKit["click"] = (...args) => kit.click(...args);
  const button: PageKit["button"] = (...args) => kit.button(...args);
  const mainText: PageKit["mainText"] = (...args) => kit.mainText(...args);

  async function rememberCookies(context: BrowserContext): Promise<Cookie[]> {
    const cookies = await context.cookies();
    for (const cookie of cookies) if (cookie.value) secrets.add(cookie.value);
    return cookies;
  }

  /** From the claim link to the confirmation page, as `user` at `provider`. */
  async function signIn(
    page: Page,
    key: Key,
    provider: "Google" | "GitHub",
    user: FakeUser,
    shots?: string,
  ): Promise<void> {
    expect((await navigation(page, () => page.goto(key.claim_url))).status()).toBe(200);
    const atProvider = await click(page, button(page, `Sign in with ${provider}`));
    expect(atProvider.status()).toBe(200);
    expect(page.url()).toContain(provider === "Google" ? google.issuerUrl : github.baseUrl);
    if (shots) await providerShot(page, `${shots}-provider`);
    const confirm = await click(page, button(page, `Continue as ${user.email}`));
    expect(confirm.status()).toBe(200);
    expect(page.url()).toBe(`${key.claim_url}/confirm`);
    await rememberCookies(page.context());
  }

  async function projectState(projectId: string) {
    const project = await db.prisma.project.findUniqueOrThrow({ where: { id: projectId } });
    const ledger = await db.prisma.creditLedgerEntry.findMany({ where: { projectId } });
    const token = await db.prisma.claimToken.findFirstOrThrow({ where: { projectId } });
    return { project, ledger, token };
  }

  async function expectUnclaimed(projectId: string): Promise<void> {
    const { project, ledger, token } = await projectState(projectId);
    expect(project).toMatchObject({ accountId: null, claimedAt: null, creditBalance: 0 });
    expect(ledger).toEqual([]);
    expect(token.usedAt).toBeNull();
  }

  it("Google: shows the project, signs in with OIDC, confirms and claims; the key and earlier messages keep working", async () => {
    const key = await newKey();
    const failed = await send(key, "+995500000001");
    const delivered = await send(key, "+995555123456");
    const context = await browser.newContext();
    const page = await context.newPage();

    const landing = await navigation(page, () => page.goto(key.claim_url));
    expect(landing.status()).toBe(200);
    const headers = landing.headers();
    expect(headers["cache-control"]).toBe("no-store");
    expect(headers["referrer-policy"]).toBe("no-referrer");
    expect(headers["content-security-policy"]).toContain("default-src 'none'");
    expect(headers["content-security-policy"]).toContain(
      `form-action 'self' ${google.issuerUrl} ${github.baseUrl}`,
    );
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    const text = await mainText(page);
    expect(text).toContain(key.project_id);
    expect(text).toMatch(/Messages sent so far\s+2/);
    expect(text).toContain(`${key.api_key.slice(0, 12)}…`);
    expect(text).not.toContain(key.api_key);
    expect(text).not.toContain(tokenOf(key));
    expect(await button(page, "Sign in with Google").isVisible()).toBe(true);
    expect(await button(page, "Sign in with GitHub").isVisible()).toBe(true);
    // The dashboard's frame: its header, brand and docs link, its stylesheet; the action in view on a phone.
    expect(await page.locator("header .brand").textContent()).toBe("SMS API dashboard");
    expect(await page.locator("header").getByRole("link", { name: "API docs" }).getAttribute("href")).toBe(
      "/docs",
    );
    expect(await page.locator('link[rel="stylesheet"]').getAttribute("href")).toMatch(
      /^\/dashboard\/assets\/dashboard\.css\?v=/,
    );
    expect(
      await page.evaluate(
        () => getComputedStyle(document.querySelector("header.top") as Element).borderBottomStyle,
      ),
    ).toBe("solid");
    await expectInViewOnPhone(page, button(page, "Sign in with Google"), "landing");
    await shot(page, "01-landing");

    await click(page, button(page, "Sign in with Google"));
    expect(page.url().startsWith(`${google.issuerUrl}/consent?`)).toBe(true);
    const signInCookie = (await rememberCookies(context)).find(
      (cookie) => cookie.name === "sms_claim_signin",
    );
    expect(signInCookie).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false, path: "/claim" });
    const authorize = new URL(page.url()).searchParams;
    expect(authorize.get("redirect_uri")).toBe(`${server.baseUrl}/claim/callback/google`);
    expect(authorize.get("code_challenge_method")).toBe("S256");
    expect(authorize.get("nonce")).toBeTruthy();
    expect(authorize.get("scope")).toBe("openid email profile");
    await providerShot(page, "02-google-provider");

    const confirmation = await click(page, button(page, `Continue as ${ALICE.email}`));
    expect(confirmation.status()).toBe(200);
    expect(page.url()).toBe(`${key.claim_url}/confirm`);
    const cookies = await rememberCookies(context);
    expect(cookies.map((cookie) => cookie.name)).toEqual(["sms_claim_identity"]);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/claim" });
    expect(await mainText(page)).toContain(`signed in with Google as ${ALICE.email}`);
    await expectInViewOnPhone(page, button(page, "Claim this project"), "confirmation");
    await shot(page, "03-confirm");
    await expectUnclaimed(key.project_id);

    const claimed = await click(page, button(page, "Claim this project"));
    expect(claimed.status()).toBe(200);
    const done = await mainText(page);
    expect(done).toContain("Project claimed");
    expect(done).toContain(`${FREE_CREDITS} free credits were added`);
    expect(done).toMatch(/Create a live key .* on the dashboard/);
    await expectInViewOnPhone(
      page,
      page.getByRole("link", { name: "Open the project in the dashboard" }),
      "claimed",
    );
    await shot(page, "04-claimed");

    const { project, ledger, token } = await projectState(key.project_id);
    expect(project).toMatchObject({ creditBalance: FREE_CREDITS, hasPaidCredits: false });
    expect(project.claimedAt).not.toBeNull();
    expect(ledger).toEqual([expect.objectContaining({ kind: "grant_free", amount: FREE_CREDITS })]);
    expect(token.usedAt).not.toBeNull();
    expect(token.usedByAccountId).toBe(project.accountId);
    const identity = await db.prisma.accountIdentity.findFirstOrThrow({
      where: { accountId: project.accountId! },
    });
    expect(identity).toMatchObject({ provider: "google", subject: ALICE.subject, email: ALICE.email });

    // The key keeps working, and what it sent before the claim stays readable.
    for (const earlier of [failed, delivered]) {
      const read = await api(`/v1/messages/${earlier.id}`, {
        headers: { Authorization: `Bearer ${key.api_key}` },
      });
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({
        id: earlier.id,
        to: earlier.to,
        created_at: earlier.created_at,
      });
    }
    await send(key, "+995555123457");

    // The link is spent: anyone opening it now gets a 410 page.
    const stranger = await browser.newContext();
    const other = await stranger.newPage();
    const gone = await navigation(other, () => other.goto(key.claim_url));
    expect(gone.status()).toBe(410);
    expect(await mainText(other)).toContain("already been used");
    expect(await other.getByRole("button").count()).toBe(0);
    await shot(other, "05-used-link");
    await stranger.close();
    await context.close();
  });

  it("GitHub: signs in with the OAuth web flow and claims with the numeric user id and primary email", async () => {
    const key = await newKey();
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, key, "GitHub", OCTO, "06-github");
    expect(await mainText(page)).toContain(`signed in with GitHub as ${OCTO.email}`);
    await shot(page, "07-github-confirm");
    const claimed = await click(page, button(page, "Claim this project"));
    expect(claimed.status()).toBe(200);
    expect(await mainText(page)).toContain("Project claimed");
    await shot(page, "08-github-claimed");

    const { project, ledger } = await projectState(key.project_id);
    expect(project.creditBalance).toBe(FREE_CREDITS);
    expect(ledger).toHaveLength(1);
    const identity = await db.prisma.accountIdentity.findFirstOrThrow({
      where: { accountId: project.accountId! },
    });
    expect(identity).toMatchObject({ provider: "github", subject: String(OCTO.id), email: OCTO.email });
    expect(github.tokenRequests.ok).toBeGreaterThanOrEqual(1);
    await context.close();
  });

  it("double confirmation: a second confirm by the same account shows success again and grants nothing more", async () => {
    const key = await newKey();
    const context = await browser.newContext();
    const first = await context.newPage();
    await signIn(first, key, "Google", BOB);
    const second = await context.newPage();
    await navigation(second, () => second.goto(first.url()));

    expect((await click(first, button(first, "Claim this project"))).status()).toBe(200);
    const again = await click(second, button(second, "Claim this project"));
    expect(again.status()).toBe(200);
    const text = await mainText(second);
    expect(text).toContain("You already claimed this project");
    expect(text).toContain("no credits were added again");
    await shot(second, "09-already-claimed");

    // Reloading the confirmation page afterwards says the same.
    const reload = await navigation(first, () => first.goto(`${key.claim_url}/confirm`));
    expect(reload.status()).toBe(200);
    expect(await mainText(first)).toContain("You already claimed this project");

    const { project, ledger } = await projectState(key.project_id);
    expect(project.creditBalance).toBe(FREE_CREDITS);
    expect(ledger).toHaveLength(1);
    await context.close();
  });

  it("two browsers confirming at once: exactly one claims, the other gets 410", async () => {
    const key = await newKey();
    const [contextA, contextB] = await Promise.all([browser.newContext(), browser.newContext()]);
    const [pageA, pageB] = await Promise.all([contextA.newPage(), contextB.newPage()]);
    await Promise.all([signIn(pageA, key, "Google", ALICE), signIn(pageB, key, "GitHub", HUBOT)]);

    const [a, b] = await Promise.all([
      click(pageA, button(pageA, "Claim this project")),
      click(pageB, button(pageB, "Claim this project")),
    ]);
    expect([a.status(), b.status()].sort()).toEqual([200, 410]);
    const [winner, loser] = a.status() === 200 ? [pageA, pageB] : [pageB, pageA];
    expect(await mainText(winner)).toContain("Project claimed");
    expect(await mainText(loser)).toContain("already been used");
    await shot(loser, "10-race-loser");

    const { project, ledger } = await projectState(key.project_id);
    expect(project.creditBalance).toBe(FREE_CREDITS);
    expect(ledger).toHaveLength(1);
    const identity = await db.prisma.accountIdentity.findFirstOrThrow({
      where: { accountId: project.accountId! },
    });
    expect(identity.provider).toBe(winner === pageA ? "google" : "github");
    await Promise.all([contextA.close(), contextB.close()]);
  });

  it("cancel at the provider: a page says so, with a way back; nothing is claimed", async () => {
    const key = await newKey();
    const context = await browser.newContext();
    const page = await context.newPage();
    for (const provider of ["GitHub", "Google"] as const) {
      await navigation(page, () => page.goto(key.claim_url));
      await click(page, button(page, `Sign in with ${provider}`));
      const cancelled = await click(page, button(page, "Cancel"));
      expect(cancelled.status()).toBe(200);
      expect(page.url()).toContain(`/claim/callback/${provider.toLowerCase()}?`);
      const text = await mainText(page);
      expect(text).toContain("Sign-in was cancelled");
      expect(text).toContain(`signing in with ${provider}`);
      await shot(page, `11-cancelled-${provider.toLowerCase()}`);
      expect((await context.cookies()).filter((cookie) => cookie.name === "sms_claim_signin")).toEqual([]);
      const back = await click(page, page.getByRole("link", { name: "Back to the claim page" }));
      expect(back.status()).toBe(200);
      expect(page.url()).toBe(key.claim_url);
    }
    await expectUnclaimed(key.project_id);
    await context.close();
  });

  it("a forged state is refused, and the genuine answer still completes", async () => {
    const key = await newKey();
    // The attacker completes a sign-in of their own and keeps the callback URL.
    const attacker = await browser.newContext();
    const attackerPage = await attacker.newPage();
    await navigation(attackerPage, () => attackerPage.goto(key.claim_url));
    await click(attackerPage, button(attackerPage, "Sign in with Google"));
    // Redirects are not routed, so the provider's answer is taken from its
    // /authorize response instead of being followed.
    let forged = "";
    await attackerPage.route("**/authorize?**", async (route) => {
      const response = await route.fetch({ maxRedirects: 0 });
      forged = response.headers().location ?? "";
      await route.fulfill({ status: 200, contentType: "text/plain", body: "callback captured" });
    });
    await click(attackerPage, button(attackerPage, `Continue as ${BOB.email}`));
    expect(forged).toContain(`${server.baseUrl}/claim/callback/google?`);
    secrets.add(new URL(forged).searchParams.get("code") ?? "");

    // The victim has a sign-in of their own in progress and is sent there.
    const victim = await browser.newContext();
    const page = await victim.newPage();
    await navigation(page, () => page.goto(key.claim_url));
    await click(page, button(page, "Sign in with Google"));
    const consent = page.url();
    const refused = await navigation(page, () => page.goto(forged));
    expect(refused.status()).toBe(400);
    expect(await mainText(page)).toContain("Sign-in could not be verified");
    await shot(page, "12-forged-state");
    expect((await victim.cookies()).map((cookie) => cookie.name)).toEqual(["sms_claim_signin"]);

    // A tampered state in the attacker's own browser is refused the same way.
    const tampered = new URL(forged);
    tampered.searchParams.set("state", "forged-state-value");
    const tamperedResponse = await navigation(attackerPage, () => attackerPage.goto(tampered.href));
    expect(tamperedResponse.status()).toBe(400);

    // The victim's own sign-in was left intact.
    await navigation(page, () => page.goto(consent));
    const confirm = await click(page, button(page, `Continue as ${ALICE.email}`));
    expect(confirm.status()).toBe(200);
    expect(await mainText(page)).toContain(`signed in with Google as ${ALICE.email}`);
    await expectUnclaimed(key.project_id);
    await Promise.all([attacker.close(), victim.close()]);
  });

  it("a replayed authorization code is refused (both providers)", async () => {
    const key = await newKey();
    for (const [provider, user] of [
      ["Google", ALICE],
      ["GitHub", OCTO],
    ] as const) {
      const context = await browser.newContext();
      const page = await context.newPage();
      let callbackUrl = "";
      page.on("request", (request) => {
        if (request.url().includes("/claim/callback/")) callbackUrl = request.url();
      });
      await navigation(page, () => page.goto(key.claim_url));
      await click(page, button(page, `Sign in with ${provider}`));
      const signInCookie = (await rememberCookies(context)).find(
        (cookie) => cookie.name === "sms_claim_signin",
      )!;
      const confirm = await click(page, button(page, `Continue as ${user.email}`));
      expect(confirm.status()).toBe(200);
      secrets.add(new URL(callbackUrl).searchParams.get("code") ?? "");

      // Replayed in the same browser: the sign-in was used up.
      const replay = await navigation(page, () => page.goto(callbackUrl));
      expect(replay.status()).toBe(400);
      expect(await mainText(page)).toContain("Sign-in expired");
      if (provider === "Google") await shot(page, "13-replay-no-session");

      // Even with the old sign-in cookie restored, the provider refuses the code.
      await context.addCookies([signInCookie]);
      const rejected = await navigation(page, () => page.goto(callbackUrl));
      expect(rejected.status()).toBe(400);
      expect(await mainText(page)).toContain("Sign-in failed");
      if (provider === "Google") await shot(page, "14-replay-code-refused");
      await context.close();
    }
    expect(github.tokenRequests.refused).toBeGreaterThanOrEqual(1);
    await expectUnclaimed(key.project_id);
  });

  it("an expired link shows 410 and claims nothing, also when it expires between sign-in and confirmation", async () => {
    const expired = await newKey();
    await db.prisma.claimToken.updateMany({
      where: { projectId: expired.project_id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    const gone = await navigation(page, () => page.goto(expired.claim_url));
    expect(gone.status()).toBe(410);
    expect(await mainText(page)).toContain("This claim link has expired");
    expect(await page.getByRole("button").count()).toBe(0);
    await shot(page, "15-expired-link");
    await expectUnclaimed(expired.project_id);

    const late = await newKey();
    await signIn(page, late, "Google", ALICE);
    await db.prisma.claimToken.updateMany({
      where: { projectId: late.project_id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const refused = await click(page, button(page, "Claim this project"));
    expect(refused.status()).toBe(410);
    expect(await mainText(page)).toContain("This claim link has expired");
    await expectUnclaimed(late.project_id);

    // The keys are unaffected.
    await send(expired, "+995555123458");
    await send(late, "+995555123459");
    await context.close();
  });

  it("an unknown link shows 404", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await navigation(page, () => page.goto(`${server.baseUrl}/claim/${"A".repeat(43)}`));
    expect(response.status()).toBe(404);
    expect(await mainText(page)).toContain("Claim link not found");
    await shot(page, "16-unknown-link");
    await context.close();
  });

  it("never writes claim tokens, API keys, codes or cookies to the log", async () => {
    const output = server.output.join("\n");
    expect(output).toContain('"route":"/claim/{token}"');
    expect(output).toContain('"route":"/claim/callback/{provider}"');
    expect(secrets.size).toBeGreaterThan(10);
    for (const secret of secrets) if (secret) expect(output).not.toContain(secret);
  });
});
