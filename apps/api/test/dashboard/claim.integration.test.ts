// The claim pages in-process (startTestApp): what the browser test cannot
// easily reach. Security edges of each step (cross-site posts, CSRF, forged,
// tampered and expired cookies, oversized and non-form bodies), cookie
// attributes, offered providers, the purge of unclaimed projects' messages
// with the manual clock, and two instances purging one PostgreSQL database.
import { createCookieSealer, newId, sha256Hex } from "@sms/crypto";
import { createDatabase } from "@sms/db";
import {
  availableBackends,
  createPostgresTestDatabase,
  type PostgresTestDatabase,
  type PrismaDatabase,
  withPrisma,
} from "@sms/db/testing";
import { claimProject } from "@sms/domain";
import { createWeb, identityProvidersFromConfig } from "@sms/web";
import { cookieNames, type SignedInIdentity } from "@sms/web/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, createApp } from "../../src/app.ts";
import { type Config, parseEnv } from "../../src/config/index.ts";
import type { RequestState } from "../../src/trpc/request-state.ts";
import { webPort } from "../../src/web-port.ts";
import { createTestKey, ManualClock, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";
import { expectOnlyOwnStylesheet } from "../support/claim-html.ts";

const backends = await availableBackends();
const SECRET = "claim-integration-test-cookie-secret-0123456789";
const DAY_MS = 86_400_000;
const GITHUB_ENV = {
  GITHUB_CLIENT_ID: "gh-client",
  GITHUB_CLIENT_SECRET: "gh-secret",
  GITHUB_AUTHORIZE_URL: "https://github.example/login/oauth/authorize",
  // Nothing listens here: a code exchange fails as "unreachable".
  GITHUB_TOKEN_URL: "http://127.0.0.1:9/login/oauth/access_token",
  GITHUB_API_URL: "http://127.0.0.1:9",
};
const names = cookieNames(false);
const SAME_ORIGIN = { "Sec-Fetch-Site": "same-origin", Origin: "http://api.test" };
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

type Key = { api_key: string; project_id: string; claim_url: string; expires_at: string };

describe("the claim pages (in-process)", () => {
  let t: TestApp;
  /** The pages' routes, as app.ts builds them, with another configuration. */
  const claimPageRoutes = async (config: Config) =>
    (
      await createWeb(
        webPort({
          deps: t.app.deps,
          config,
          sealer: await createCookieSealer(config.claims.cookieSecret ?? SECRET),
          identityProviders: identityProvidersFromConfig(config.claims),
          brandsConfigured: false,
        }),
      )
    ).routes;
  const tokenOf = (key: Key) => key.claim_url.slice(key.claim_url.lastIndexOf("/") + 1);
  const path = (key: Key, rest = "") => `/claim/${tokenOf(key)}${rest}`;
  const newKey = () => createTestKey((p, init) => t.request(p, init)) as Promise<Key>;
  const sealer = () => createCookieSealer(SECRET);

  async function identityCookie(key: Key, overrides: Partial<SignedInIdentity> = {}, maxAgeMs = 15 * 60_000) {
    const identity: SignedInIdentity = {
      provider: "github",
      subject: "583231",
      email: "octocat@example.com",
      name: "The Octocat",
      token: tokenOf(key),
      sessionId: crypto.randomUUID(),
      ...overrides,
    };
    const s = await sealer();
    const value = await s.seal(names.identity, identity, maxAgeMs, t.clock.now());
    return { identity, cookie: `${names.identity}=${value}`, csrf: await s.csrfToken(identity.sessionId) };
  }

  /** What the gateway hands a page route, for calling a route directly. */
  const routeState = (): RequestState =>
    ({
      requestId: "req_test",
      clientAddress: "203.0.113.10",
      log: t.app.deps.logger,
      response: { headers: {} },
    }) as unknown as RequestState;

  const confirm = (key: Key, cookie: string | null, body: string, headers: Record<string, string> = {}) =>
    t.request(path(key, "/confirm"), {
      method: "POST",
      headers: { ...FORM, ...SAME_ORIGIN, ...(cookie ? { Cookie: cookie } : {}), ...headers },
      body,
    });

  const startSignIn = (key: Key, body = "provider=github", headers: Record<string, string> = {}) =>
    t.request(path(key, "/sign-in"), {
      method: "POST",
      headers: { ...FORM, ...SAME_ORIGIN, ...headers },
      body,
    });

  beforeAll(async () => {
    t = await startTestApp({
      backend: "pglite",
      env: {
        CLAIM_COOKIE_SECRET: SECRET,
        ...GITHUB_ENV,
        TEST_KEYS_PER_MINUTE: "1000",
        TEST_KEYS_PER_DAY: "1000",
      },
    });
  });
  afterAll(() => t?.close());

  it("offers only the configured provider and allows forms to reach only it", async () => {
    const key = await newKey();
    const response = await t.request(path(key));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'self'; img-src data:; base-uri 'none'; form-action 'self' https://github.example; frame-ancestors 'none'",
    );
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    const html = await response.text();
    expect(html).toContain("Sign in with GitHub");
    expect(html).not.toContain("Sign in with Google");
    // No script; one stylesheet, the dashboard's own (same origin; the page sends no Referer).
    expectOnlyOwnStylesheet(html);
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    // The token appears only in this page's own form action.
    expect(html.split(tokenOf(key)).length - 1).toBe(1);
    expect(html).toContain(`action="/claim/${tokenOf(key)}/sign-in"`);
  });

  it("says sign-in is unavailable when no provider is configured, and escapes nothing unsafely", async () => {
    const key = await newKey();
    const config = parseEnv({
      NODE_ENV: "test",
      PUBLIC_BASE_URL: "http://api.test",
      CLAIM_COOKIE_SECRET: SECRET,
      // Without a provider, development sign-in would be offered (dashboard.integration.test.ts).
      DEV_SIGN_IN: "false",
    });
    const routes = await claimPageRoutes(config);
    const landing = routes.find((route) => route.method === "GET" && route.path === "/claim/{token}")!;
    const state = routeState();
    const response = await landing.handle(new Request(`http://api.test${path(key)}`), state, {
      token: tokenOf(key),
    });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain("Sign-in is not available on this server right now");
    expect(html).not.toContain("<button");
    expect(response.headers.get("content-security-policy")).toContain("form-action 'self';");
  });

  it("starts sign-in with a 303 to the provider and a sealed, HttpOnly, SameSite=Lax cookie", async () => {
    const key = await newKey();
    const response = await startSignIn(key);
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get("location")!);
    expect(`${location.origin}${location.pathname}`).toBe(GITHUB_ENV.GITHUB_AUTHORIZE_URL);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      client_id: "gh-client",
      redirect_uri: "http://api.test/claim/callback/github",
      scope: "read:user user:email",
      code_challenge_method: "S256",
    });
    expect(location.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.has("client_secret")).toBe(false);
    const cookie = response.headers.get("set-cookie")!;
    expect(cookie).toMatch(
      new RegExp(`^${names.signIn}=[A-Za-z0-9_-]+; Path=/claim; Max-Age=600; HttpOnly; SameSite=Lax$`),
    );
    // Sealed: neither the state nor the token can be read from it.
    expect(cookie).not.toContain(location.searchParams.get("state"));
    expect(cookie).not.toContain(tokenOf(key));
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("marks the cookies Secure (and __Secure-) when the public base URL is https", async () => {
    const key = await newKey();
    const config = parseEnv({
      NODE_ENV: "test",
      PUBLIC_BASE_URL: "https://sms.example",
      CLAIM_COOKIE_SECRET: SECRET,
      ...GITHUB_ENV,
    });
    const routes = await claimPageRoutes(config);
    const start = routes.find((route) => route.method === "POST" && route.path === "/claim/{token}/sign-in")!;
    const state = routeState();
    const request = new Request(`https://sms.example${path(key, "/sign-in")}`, {
      method: "POST",
      headers: { ...FORM, "Sec-Fetch-Site": "same-origin", Origin: "https://sms.example" },
      body: "provider=github",
    });
    const response = await start.handle(request, state, { token: tokenOf(key) });
    expect(response.status).toBe(303);
    expect(new URL(response.headers.get("location")!).searchParams.get("redirect_uri")).toBe(
      "https://sms.example/claim/callback/github",
    );
    expect(response.headers.get("set-cookie")).toMatch(
      /^__Secure-sms_claim_signin=[^;]+; Path=\/claim; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/,
    );
  });

  it("limits sign-in starts per caller address per minute, with Retry-After, and lets the next minute through", async () => {
    const limited = await startTestApp({
      backend: "pglite",
      clock: new ManualClock("2026-11-22T10:00:20Z"),
      env: { CLAIM_COOKIE_SECRET: SECRET, ...GITHUB_ENV, CLAIM_SIGN_INS_PER_MINUTE: "2" },
    });
    try {
      const key = (await createTestKey((p, init) => limited.request(p, init))) as Key;
      const start = (address: string) =>
        limited.request(
          path(key, "/sign-in"),
          { method: "POST", headers: { ...FORM, ...SAME_ORIGIN }, body: "provider=github" },
          address,
        );
      expect((await start("198.51.100.7")).status).toBe(303);
      expect((await start("198.51.100.7")).status).toBe(303);
      const refused = await start("198.51.100.7");
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("40");
      expect(refused.headers.get("set-cookie")).toBeNull();
      expect(refused.headers.get("location")).toBeNull();
      expect(await refused.text()).toContain("Too many sign-in attempts");
      // Another network is not affected; the same one may start again next minute.
      expect((await start("198.51.100.8")).status).toBe(303);
      limited.clock.advance(40_000);
      expect((await start("198.51.100.7")).status).toBe(303);
    } finally {
      await limited.close();
    }
  });

  it("refuses to start sign-in cross-site, for an unoffered provider, with a bad body, or for a dead link", async () => {
    const key = await newKey();
    expect((await startSignIn(key, "provider=github", { "Sec-Fetch-Site": "cross-site" })).status).toBe(403);
    expect((await startSignIn(key, "provider=github", { "Sec-Fetch-Site": "same-site" })).status).toBe(403);
    const foreign = await t.request(path(key, "/sign-in"), {
      method: "POST",
      headers: { ...FORM, Origin: "https://evil.example" },
      body: "provider=github",
    });
    expect(foreign.status).toBe(403);
    expect((await startSignIn(key, "provider=google")).status).toBe(400);
    expect((await startSignIn(key, "provider=github", { "Content-Type": "application/json" })).status).toBe(
      415,
    );
    expect((await startSignIn(key, `provider=github&x=${"a".repeat(5000)}`)).status).toBe(413);
    for (const response of [
      await startSignIn(key, "provider=github", { "Sec-Fetch-Site": "cross-site" }),
      await startSignIn(key, "provider=google"),
    ]) {
      expect(response.headers.get("set-cookie")).toBeNull();
    }

    await t.app.db.prisma.claimToken.updateMany({
      where: { projectId: key.project_id },
      data: { usedAt: t.clock.now() },
    });
    expect((await startSignIn(key)).status).toBe(410);
    expect(
      (
        await t.request(`/claim/${"A".repeat(43)}/sign-in`, {
          method: "POST",
          headers: { ...FORM, ...SAME_ORIGIN },
          body: "provider=github",
        })
      ).status,
    ).toBe(404);
  });

  describe("the provider's callback", () => {
    async function begin(key: Key) {
      const response = await startSignIn(key);
      const cookie = response.headers.get("set-cookie")!.split(";")[0]!;
      const state = new URL(response.headers.get("location")!).searchParams.get("state")!;
      return { cookie, state };
    }
    const callback = (query: string, cookie?: string, provider = "github") =>
      t.request(`/claim/callback/${provider}?${query}`, { headers: cookie ? { Cookie: cookie } : {} });

    it("refuses an answer with no sign-in in progress, or for an unoffered provider", async () => {
      const none = await callback("code=abc&state=xyz");
      expect(none.status).toBe(400);
      expect(await none.text()).toContain("Sign-in expired");
      expect((await callback("code=abc&state=xyz", undefined, "google")).status).toBe(404);
      expect((await callback("code=abc&state=xyz", undefined, "gitlab")).status).toBe(404);
    });

    it("refuses a state that is not this browser's, and keeps the sign-in in progress", async () => {
      const key = await newKey();
      const { cookie, state } = await begin(key);
      for (const query of ["code=abc&state=forged", "code=abc", `code=abc&state=${state}x`]) {
        const response = await callback(query, cookie);
        expect(response.status).toBe(400);
        expect(await response.text()).toContain("Sign-in could not be verified");
        expect(response.headers.get("set-cookie")).toBeNull();
      }
      // A tampered cookie is no sign-in at all.
      const tampered = `${cookie.slice(0, -2)}${cookie.at(-2) === "A" ? "B" : "A"}${cookie.slice(-1)}`;
      expect(tampered).not.toBe(cookie);
      expect((await callback(`code=abc&state=${state}`, tampered)).status).toBe(400);
      // Sealed for one cookie name, it does not open as the other.
      const asIdentity = cookie.replace(names.signIn, names.identity);
      expect((await t.request(path(key, "/confirm"), { headers: { Cookie: asIdentity } })).status).toBe(303);
    });

    it("shows the cancelled page for access_denied and a failure page for other provider errors", async () => {
      const key = await newKey();
      const first = await begin(key);
      const cancelled = await callback(
        `error=access_denied&error_description=denied&state=${first.state}`,
        first.cookie,
      );
      expect(cancelled.status).toBe(200);
      const html = await cancelled.text();
      expect(html).toContain("Sign-in was cancelled");
      expect(html).toContain(`href="/claim/${tokenOf(key)}"`);
      expect(cancelled.headers.get("set-cookie")).toMatch(
        new RegExp(`^${names.signIn}=; Path=/claim; Max-Age=0;`),
      );

      const second = await begin(key);
      const failed = await callback(`error=server_error&state=${second.state}`, second.cookie);
      expect(failed.status).toBe(400);
      expect(await failed.text()).toContain("reported an error");
    });

    it("answers 502 when the provider's token endpoint cannot be reached, and expires the sign-in after 10 minutes", async () => {
      const key = await newKey();
      const { cookie, state } = await begin(key);
      const unreachable = await callback(`code=abc&state=${state}`, cookie);
      expect(unreachable.status).toBe(502);
      expect(await unreachable.text()).toContain("could not be reached");

      const later = await begin(key);
      t.clock.advance(10 * 60_000);
      const expired = await callback(`code=abc&state=${later.state}`, later.cookie);
      expect(expired.status).toBe(400);
      expect(await expired.text()).toContain("Sign-in expired");
    });
  });

  describe("confirmation", () => {
    it("sends a browser without a sign-in for this link back to the claim page", async () => {
      const key = await newKey();
      const none = await t.request(path(key, "/confirm"));
      expect(none.status).toBe(303);
      expect(none.headers.get("location")).toBe(path(key));
      const other = await newKey();
      const { cookie } = await identityCookie(other);
      expect((await t.request(path(key, "/confirm"), { headers: { Cookie: cookie } })).status).toBe(303);
    });

    it("shows who is signed in, with a CSRF token bound to the sign-in", async () => {
      const key = await newKey();
      const { cookie, csrf } = await identityCookie(key);
      const response = await t.request(path(key, "/confirm"), { headers: { Cookie: cookie } });
      expect(response.status).toBe(200);
      const html = await response.text();
      expect(html).toContain(
        "signed in with <strong>GitHub</strong> as <strong>octocat@example.com</strong>",
      );
      expect(html).toContain(`<input type="hidden" name="csrf_token" value="${csrf}">`);
      expect(html).toContain(`action="/claim/${tokenOf(key)}/confirm"`);
    });

    it("refuses cross-site posts, wrong or missing CSRF tokens, bad bodies and missing or stale sign-ins", async () => {
      const key = await newKey();
      const { cookie, csrf } = await identityCookie(key);
      const other = await identityCookie(key, { subject: "1" });
      const cases: Array<[number, Response]> = [
        [403, await confirm(key, cookie, `csrf_token=${csrf}`, { "Sec-Fetch-Site": "cross-site" })],
        [403, await confirm(key, cookie, `csrf_token=${csrf}`, { "Sec-Fetch-Site": "none" })],
        [
          403,
          await t.request(path(key, "/confirm"), {
            method: "POST",
            headers: { ...FORM, Cookie: cookie, Origin: "https://evil.example" },
            body: `csrf_token=${csrf}`,
          }),
        ],
        [403, await confirm(key, cookie, "")],
        [403, await confirm(key, cookie, "csrf_token=forged")],
        // Another sign-in's token does not fit this one.
        [403, await confirm(key, cookie, `csrf_token=${other.csrf}`)],
        [
          415,
          await confirm(key, cookie, JSON.stringify({ csrf_token: csrf }), {
            "Content-Type": "application/json",
          }),
        ],
        [413, await confirm(key, cookie, `csrf_token=${csrf}&pad=${"x".repeat(4096)}`)],
        [400, await confirm(key, null, `csrf_token=${csrf}`)],
        [400, await confirm(key, cookie.slice(0, -3), `csrf_token=${csrf}`)],
      ];
      for (const [status, response] of cases) expect(response.status).toBe(status);
      const stale = await identityCookie(key);
      t.clock.advance(15 * 60_000);
      expect((await confirm(key, stale.cookie, `csrf_token=${stale.csrf}`)).status).toBe(400);
      const project = await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } });
      expect(project.claimedAt).toBeNull();
    });

    it("claims once; the same account again sees success, another account 410", async () => {
      const key = await newKey();
      const { cookie, csrf } = await identityCookie(key);
      const first = await confirm(key, cookie, `csrf_token=${encodeURIComponent(csrf)}`);
      expect(first.status).toBe(200);
      expect(await first.text()).toContain("50 free credits were added");
      const again = await confirm(key, cookie, `csrf_token=${encodeURIComponent(csrf)}`);
      expect(again.status).toBe(200);
      expect(await again.text()).toContain("You already claimed this project");
      const stranger = await identityCookie(key, {
        provider: "github",
        subject: "1031",
        email: null,
        name: "hubot",
      });
      const refused = await confirm(key, stranger.cookie, `csrf_token=${encodeURIComponent(stranger.csrf)}`);
      expect(refused.status).toBe(410);
      expect(await refused.text()).toContain("already been used");
      // The stranger's confirmation page says the same.
      expect((await t.request(path(key, "/confirm"), { headers: { Cookie: stranger.cookie } })).status).toBe(
        410,
      );

      const project = await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } });
      expect(project).toMatchObject({ creditBalance: 50, hasPaidCredits: false });
      expect(await t.app.db.prisma.creditLedgerEntry.count({ where: { projectId: key.project_id } })).toBe(1);
    });
  });

  it("never logs tokens, cookies, CSRF tokens or email addresses", async () => {
    const key = await newKey();
    const { cookie, csrf } = await identityCookie(key, { email: "secret.person@example.com" });
    expect((await confirm(key, cookie, `csrf_token=${encodeURIComponent(csrf)}`)).status).toBe(200);
    const text = t.logs.text;
    expect(text).not.toContain(tokenOf(key));
    expect(text).not.toContain(cookie.split("=")[1]!);
    expect(text).not.toContain(csrf);
    expect(text).not.toContain("secret.person@example.com");
    expect(text).not.toContain("583231");
    const confirmation = t.logs.entries.find(
      (entry) => entry.msg === "claim confirmation" && entry.project_id === key.project_id,
    );
    expect(confirmation).toMatchObject({ outcome: "claimed", provider: "github", credits_granted: 50 });
    const access = t.logs.entries.filter(
      (entry) => entry.msg === "request" && String(entry.route).startsWith("/claim"),
    );
    expect(new Set(access.map((entry) => entry.route))).toEqual(
      new Set([
        "/claim/{token}",
        "/claim/{token}/sign-in",
        "/claim/callback/{provider}",
        "/claim/{token}/confirm",
      ]),
    );
  });
});

describe.each(backends)("the purge of unclaimed projects' messages on %s", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ backend, clock: new ManualClock("2026-11-22T10:00:00Z") });
  });
  afterAll(() => t?.close());

  const call = (p: string, init?: RequestInit) => t.request(p, init);
  async function send(apiKey: string, idempotencyKey: string) {
    const response = await call(
      "/v1/messages",
      sendMessageRequest(apiKey, idempotencyKey, {
        to: "+995555123456",
        template: "login_code",
        variables: { code: "1234" },
      }),
    );
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  }
  const read = (apiKey: string, id: string) =>
    call(`/v1/messages/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } });

  it("deletes an unclaimed project's messages 30 days after sending; claimed projects keep theirs", async () => {
    const unclaimed = await createTestKey(call);
    const claimed = await createTestKey(call);
    const early = await send(unclaimed.api_key, "early");
    const claimedEarly = await send(claimed.api_key, "early");
    const token = claimed.claim_url.slice(claimed.claim_url.lastIndexOf("/") + 1);
    const result = await claimProject(
      { store: t.app.store, config: { freeCredits: 50 } },
      {
        tokenHash: await sha256Hex(token),
        identity: { provider: "google", subject: "purge-test", email: null, name: null },
        now: t.clock.now(),
      },
    );
    expect(result.ok).toBe(true);
    t.clock.advance(10 * DAY_MS);
    const later = await send(unclaimed.api_key, "later");

    const job = t.app.jobs.find((candidate) => candidate.name === "unclaimed-messages-purge");
    expect(job?.intervalMs).toBe(3_600_000);

    // Day 30 minus a minute: nothing is due yet.
    t.clock.advance(20 * DAY_MS - 60_000);
    expect(await job!.run()).toEqual({ messages: 0, idempotency_records: 0 });

    t.clock.advance(2 * 60_000);
    const scheduler = t.app.startJobs();
    try {
      expect(await scheduler.runOnce("unclaimed-messages-purge")).toEqual({
        messages: 1,
        idempotency_records: 1,
      });
    } finally {
      await scheduler.stop();
    }
    expect((await read(unclaimed.api_key, early)).status).toBe(404);
    expect((await read(unclaimed.api_key, later)).status).toBe(200);
    expect((await read(claimed.api_key, claimedEarly)).status).toBe(200);
    expect(await t.app.db.prisma.idempotencyRecord.count({ where: { messageId: early } })).toBe(0);
    // The key still works after the purge.
    await send(unclaimed.api_key, "after-purge");

    const round = t.logs.entries.find(
      (entry) => entry.job === "unclaimed-messages-purge" && entry.messages === 1,
    );
    expect(round).toMatchObject({ msg: "job round", messages: 1, idempotency_records: 1 });
    expect(Object.keys(round!).sort()).toEqual(
      ["duration_ms", "idempotency_records", "job", "level", "messages", "msg", "service", "time"].sort(),
    );
  });
});

describe.runIf(backends.includes("postgres"))("two instances purging one PostgreSQL database", () => {
  let database: PostgresTestDatabase;
  let db: PrismaDatabase;
  const apps: App[] = [];
  const clock = new ManualClock("2026-11-22T10:00:00Z");

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    const config = parseEnv({
      NODE_ENV: "test",
      PUBLIC_BASE_URL: "http://api.test",
      LOG_LEVEL: "silent",
      DATABASE_URL: database.databaseUrl,
      CLAIM_COOKIE_SECRET: SECRET,
    });
    db = withPrisma(await createDatabase({ databaseUrl: database.databaseUrl, poolSize: 4 }));
    for (let i = 0; i < 2; i++) apps.push(await createApp(config, { clock }));
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await db?.close();
    await database?.drop();
  });

  it("deletes every due message exactly once between them", async () => {
    const projectId = newId("prj");
    const sent = new Date(clock.now().getTime() - 31 * DAY_MS);
    await db.prisma.project.create({ data: { id: projectId, createdAt: sent } });
    await db.prisma.message.createMany({
      data: Array.from({ length: 1200 }, () => ({
        id: newId("msg"),
        projectId,
        mode: "test" as const,
        recipientMasked: "+9955••••••12",
        template: "login_code",
        locale: "ka",
        sender: "SMSGE",
        provider: "simulator",
        status: "delivered" as const,
        createdAt: sent,
        updatedAt: sent,
      })),
    });
    const run = (app: App) => app.jobs.find((job) => job.name === "unclaimed-messages-purge")!.run();
    const results = await Promise.all([run(apps[0]!), run(apps[1]!), run(apps[0]!)]);
    expect(results.reduce((sum, counts) => sum + (counts.messages ?? 0), 0)).toBe(1200);
    expect(await db.prisma.message.count({ where: { projectId } })).toBe(0);
  });
});
