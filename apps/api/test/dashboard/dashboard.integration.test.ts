// The dashboard in-process (startTestApp, PGlite and PostgreSQL), for what the
// browser test cannot easily reach: every route and every procedure refuses
// another account, an anonymous caller and (operator views) a non-operator;
// every change refuses cross-site posts, missing or foreign CSRF tokens,
// ended, idle and signed-out sessions; the development provider's sign-in and
// its refusal in production; the session cookie's attributes; `next` never
// leaves the dashboard; strict CSP and no inline script or style; nothing
// secret in the log.
import { createCookieSealer, sha256Hex } from "@sms/crypto";
import { availableBackends } from "@sms/db/testing";
import { claimProject, type DashboardViewer, developmentIdentity } from "@sms/domain";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInternalCaller } from "../../src/internal-router.ts";
import type { RequestState } from "../../src/trpc/request-state.ts";
import { createTestKey, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";
import { awayFromMinuteEdge } from "../support/messages.ts";

const backends = await availableBackends();
const SECRET = "dashboard-integration-test-cookie-secret-0123";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };
const SAME_ORIGIN = { "Sec-Fetch-Site": "same-origin", Origin: "http://api.test" };
const HOUR = 3_600_000;
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

type Key = { api_key: string; project_id: string; claim_url: string; expires_at: string };

/** The cookie pair (name=value) a response sets for `name`, or null. */
function setCookie(response: Response, name: string): string | null {
  for (const header of response.headers.getSetCookie()) {
    if (header.startsWith(`${name}=`)) return header;
  }
  return null;
}

const csrfOf = (html: string) => /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? "";

describe.each(backends)("the dashboard on %s (in-process)", (backend) => {
  let t: TestApp;
  /** Secrets that must never reach the log. */
  const secrets = new Set<string>();

  beforeAll(async () => {
    t = await startTestApp({
      backend,
      env: {
        CLAIM_COOKIE_SECRET: SECRET,
        TEST_KEYS_PER_MINUTE: "1000",
        TEST_KEYS_PER_DAY: "1000",
        CLAIM_SIGN_INS_PER_MINUTE: "1000",
        OPERATOR_IDENTITIES: "dev:olga-ops",
      },
    });
  }, 120_000);
  afterAll(() => t?.close());

  const get = (path: string, cookie?: string, headers: Record<string, string> = {}) =>
    t.request(path, { headers: { ...(cookie ? { Cookie: cookie } : {}), ...headers } });
  const post = (
    path: string,
    cookie: string | null,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ) =>
    t.request(path, {
      method: "POST",
      headers: { ...FORM, ...SAME_ORIGIN, ...(cookie ? { Cookie: cookie } : {}), ...headers },
      body: new URLSearchParams(fields).toString(),
    });

  /** Signs in with the development provider; the session cookie and its CSRF token. */
  async function signIn(name: string) {
    const response = await post("/dashboard/sign-in", null, { provider: "dev", name });
    expect(response.status).toBe(303);
    const header = setCookie(response, "sms_dashboard");
    expect(header).not.toBeNull();
    const cookie = header!.split(";")[0]!;
    secrets.add(cookie.slice(cookie.indexOf("=") + 1));
    const page = await get("/dashboard/projects", cookie);
    expect(page.status).toBe(200);
    return { cookie, csrf: csrfOf(await page.text()) };
  }

  /** A test project claimed by the development identity `name`. */
  async function claimedBy(name: string): Promise<Key> {
    const key = (await createTestKey((p, init) => t.request(p, init))) as Key;
    secrets.add(key.api_key);
    const token = key.claim_url.slice(key.claim_url.lastIndexOf("/") + 1);
    secrets.add(token);
    const identity = developmentIdentity(name)!;
    const claimed = await claimProject(
      { store: t.app.store, config: { freeCredits: 50 } },
      {
        tokenHash: await sha256Hex(token),
        identity: { provider: "dev", subject: identity.subject, email: null, name },
        now: t.clock.now(),
      },
    );
    expect(claimed.ok).toBe(true);
    return key;
  }

  const state = (): RequestState => ({
    requestId: "req_test",
    request: new Request("http://api.test/internal"),
    clientAddress: "203.0.113.10",
    log: t.app.logger,
  });

  async function viewerOf(name: string): Promise<DashboardViewer> {
    const services = t.app.deps.services.dashboard.sessions;
    const started = await services.start({ identity: developmentIdentity(name)! });
    const resumed = await services.resume({ token: started.token });
    if (!resumed.ok) throw new Error("no session");
    return resumed.viewer;
  }

  it("signs in with the development provider: a sealed HttpOnly, SameSite=Lax cookie on /dashboard", async () => {
    const response = await post("/dashboard/sign-in", null, { provider: "dev", name: "Alice Example" });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/dashboard/projects");
    const header = setCookie(response, "sms_dashboard")!;
    expect(header).toMatch(
      /^sms_dashboard=[A-Za-z0-9_-]+; Path=\/dashboard; Max-Age=604800; HttpOnly; SameSite=Lax$/,
    );
    const value = header.split(";")[0]!.split("=")[1]!;
    secrets.add(value);
    // Only the token's hash is stored: the cookie (sealed) holds neither it nor anything readable.
    const rows = await t.app.db.prisma.dashboardSession.findMany({ where: { subject: "alice-example" } });
    expect(rows.length).toBeGreaterThanOrEqual(1);
    for (const row of rows) expect(value).not.toContain(row.tokenHash);
    const page = await get("/dashboard/projects", header.split(";")[0]);
    const html = await page.text();
    expect(html).toContain("Alice Example");
    expect(html).toContain("Development sign-in is on");
    expect(html).toContain("No projects yet");
  });

  it("marks the session cookie Secure (and __Secure-) when the public base URL is https", async () => {
    const https = await startTestApp({
      backend: "pglite",
      env: { CLAIM_COOKIE_SECRET: SECRET, PUBLIC_BASE_URL: "https://sms.example" },
    });
    try {
      const response = await https.app.handler(
        new Request("https://sms.example/dashboard/sign-in", {
          method: "POST",
          headers: { ...FORM, "Sec-Fetch-Site": "same-origin" },
          body: "provider=dev&name=Alice",
        }),
        { remoteAddress: "203.0.113.10" },
      );
      expect(response.status).toBe(303);
      expect(setCookie(response, "__Secure-sms_dashboard")).toMatch(
        /; Path=\/dashboard; Max-Age=604800; HttpOnly; SameSite=Lax; Secure$/,
      );
    } finally {
      await https.close();
    }
  });

  it("claiming with the development provider signs the claimant in to the dashboard, which links back to the project", async () => {
    const key = (await createTestKey((p, init) => t.request(p, init))) as Key;
    secrets.add(key.api_key);
    const claimPath = new URL(key.claim_url).pathname;
    secrets.add(claimPath.split("/").pop()!);
    const landing = await get(claimPath);
    const landingHtml = await landing.text();
    expect(landingHtml).toContain("Sign in as a local developer");
    expect(landingHtml).toContain("Development sign-in is on");
    const signedIn = await post(`${claimPath}/sign-in`, null, { provider: "dev", name: "Claire Dev" });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe(`${claimPath}/confirm`);
    const identity = setCookie(signedIn, "sms_claim_identity")!.split(";")[0]!;
    const confirm = await get(`${claimPath}/confirm`, identity);
    const confirmHtml = await confirm.text();
    expect(confirmHtml).toContain(
      "signed in with <strong>Development sign-in</strong> as <strong>Claire Dev</strong>",
    );
    const claimed = await post(`${claimPath}/confirm`, identity, { csrf_token: csrfOf(confirmHtml) });
    expect(claimed.status).toBe(200);
    const claimedHtml = await claimed.text();
    expect(claimedHtml).toContain(`href="/dashboard/projects/${key.project_id}"`);
    const session = setCookie(claimed, "sms_dashboard")!;
    expect(session).toMatch(/; Path=\/dashboard; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    const cookie = session.split(";")[0]!;
    secrets.add(cookie.split("=")[1]!);
    const projects = await (await get("/dashboard/projects", cookie)).text();
    expect(projects).toContain(key.project_id);
    const overview = await get(`/dashboard/projects/${key.project_id}`, cookie);
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain("Matches the ledger");
    // A name the development provider cannot make a subject of is refused.
    const other = (await createTestKey((p, init) => t.request(p, init))) as Key;
    const bad = await post(`${new URL(other.claim_url).pathname}/sign-in`, null, {
      provider: "dev",
      name: "<b>",
    });
    expect(bad.status).toBe(400);
    expect(setCookie(bad, "sms_claim_identity")).toBeNull();
  });

  describe("another account, an anonymous caller, a non-operator", () => {
    let alice: Key;
    let aliceKeyId: string;
    let message: string;
    let bob: { cookie: string; csrf: string };

    beforeAll(async () => {
      alice = await claimedBy("Alice Owner");
      aliceKeyId = (await t.app.db.prisma.apiKey.findFirstOrThrow({ where: { projectId: alice.project_id } }))
        .id;
      const sent = await t.request(
        "/v1/messages",
        sendMessageRequest(alice.api_key, crypto.randomUUID(), {
          to: "+995555123456",
          template: "verification_code",
          variables: { code: "4821" },
        }),
      );
      message = ((await sent.json()) as { id: string }).id;
      await claimedBy("Bob Other");
      bob = await signIn("Bob Other");
    });

    const accountGets = () => [
      `/dashboard/projects/${alice.project_id}`,
      `/dashboard/projects/${alice.project_id}?mode=live`,
      `/dashboard/projects/${alice.project_id}/keys`,
      `/dashboard/projects/${alice.project_id}/keys/roll-test`,
      `/dashboard/projects/${alice.project_id}/keys/${aliceKeyId}/revoke`,
      `/dashboard/projects/${alice.project_id}/messages`,
      `/dashboard/projects/${alice.project_id}/messages?status=submitted`,
      `/dashboard/projects/${alice.project_id}/messages/${message}`,
      `/dashboard/projects/${alice.project_id}/credits`,
      `/dashboard/projects/${alice.project_id}/sender`,
      `/dashboard/projects/${alice.project_id}/settings`,
    ];
    const accountPosts = (): Array<[string, Record<string, string>]> => [
      [`/dashboard/projects/${alice.project_id}/keys/live`, {}],
      [`/dashboard/projects/${alice.project_id}/keys/roll-test`, {}],
      [`/dashboard/projects/${alice.project_id}/keys/${aliceKeyId}/revoke`, {}],
      [`/dashboard/projects/${alice.project_id}/sender`, { name: "Acme", purpose: "sign-in codes" }],
      [`/dashboard/projects/${alice.project_id}/search`, { q: message }],
      [`/dashboard/projects/${alice.project_id}/settings`, { name: "Bob's now" }],
    ];
    const operatorGets = () => [
      "/dashboard/operator",
      `/dashboard/operator?q=${alice.project_id}`,
      `/dashboard/operator/projects/${alice.project_id}`,
      `/dashboard/operator/keys/${aliceKeyId}/revoke?project=${alice.project_id}`,
      "/dashboard/operator/audit",
    ];
    const operatorPosts = (): Array<[string, Record<string, string>]> => [
      [`/dashboard/operator/projects/${alice.project_id}/suspend`, { reason: "test" }],
      [`/dashboard/operator/projects/${alice.project_id}/reinstate`, {}],
      [`/dashboard/operator/projects/${alice.project_id}/credits`, { amount: "100", reference: "INV-1" }],
      [`/dashboard/operator/projects/${alice.project_id}/keys/live`, {}],
      [`/dashboard/operator/keys/${aliceKeyId}/revoke`, { project: alice.project_id }],
      ["/dashboard/operator/sender-requests/srq_01m83m72x0v8xf4xjtbady3d85/approve", {}],
      ["/dashboard/operator/sender-requests/srq_01m83m72x0v8xf4xjtbady3d85/refuse", { reason: "no" }],
      ["/dashboard/operator/search", { q: alice.project_id }],
    ];

    async function aliceUnchanged() {
      const keys = await t.app.db.prisma.apiKey.findMany({ where: { projectId: alice.project_id } });
      expect(keys.map((key) => [key.mode, key.revokedAt])).toEqual([["test", null]]);
      expect(await t.app.db.prisma.senderRequest.count({ where: { projectId: alice.project_id } })).toBe(0);
      expect(await t.app.db.prisma.auditEntry.count({ where: { projectId: alice.project_id } })).toBe(0);
      expect(
        await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: alice.project_id } }),
      ).toMatchObject({
        name: null,
        suspendedAt: null,
        creditBalance: 50,
      });
    }

    it("another account gets 404 from every page and every change of the project, and changes nothing", async () => {
      for (const path of accountGets()) {
        const response = await get(path, bob.cookie);
        expect(response.status, path).toBe(404);
        const html = await response.text();
        expect(html, path).toContain("Not found");
        expect(html, path).not.toContain("+9955••••••56");
      }
      for (const [path, fields] of accountPosts()) {
        const response = await post(path, bob.cookie, { ...fields, csrf_token: bob.csrf });
        expect(response.status, path).toBe(404);
      }
      expect(await (await get("/dashboard/projects", bob.cookie)).text()).not.toContain(alice.project_id);
      await aliceUnchanged();
    });

    it("an anonymous caller is sent to sign in (pages) or refused with 401 (changes)", async () => {
      for (const path of [...accountGets(), ...operatorGets(), "/dashboard/projects"]) {
        const response = await get(path);
        expect(response.status, path).toBe(303);
        const location = new URL(response.headers.get("location")!, "http://api.test");
        expect(location.pathname).toBe("/dashboard/sign-in");
        expect(location.searchParams.get("next")).toBe(path);
      }
      for (const [path, fields] of [...accountPosts(), ...operatorPosts()]) {
        const response = await post(path, null, fields);
        expect(response.status, path).toBe(401);
        expect(await response.text()).toContain("Your session has ended");
      }
      await aliceUnchanged();
    });

    it("a non-operator gets 403 from every operator page and change", async () => {
      for (const path of operatorGets()) {
        const response = await get(path, bob.cookie);
        expect(response.status, path).toBe(403);
        expect(await response.text()).toContain("Operators only");
      }
      for (const [path, fields] of operatorPosts()) {
        expect((await post(path, bob.cookie, { ...fields, csrf_token: bob.csrf })).status, path).toBe(403);
      }
      await aliceUnchanged();
    });

    it("every procedure: NOT_FOUND for another account's project, UNAUTHORIZED without a session, FORBIDDEN for a non-operator", async () => {
      const asBob = createInternalCaller({
        deps: t.app.deps,
        state: state(),
        viewer: await viewerOf("Bob Other"),
      });
      const anonymous = createInternalCaller({ deps: t.app.deps, state: state() });
      const project_id = alice.project_id;
      const dashboardCalls: Array<[string, (caller: typeof asBob) => Promise<unknown>]> = [
        ["projects.get", (c) => c.dashboard.projects.get({ project_id })],
        ["projects.usage", (c) => c.dashboard.projects.usage({ project_id })],
        ["keys.list", (c) => c.dashboard.keys.list({ project_id })],
        ["keys.get", (c) => c.dashboard.keys.get({ project_id, key_id: aliceKeyId })],
        ["keys.createLive", (c) => c.dashboard.keys.createLive({ project_id })],
        ["keys.revoke", (c) => c.dashboard.keys.revoke({ project_id, key_id: aliceKeyId })],
        ["keys.rollTest", (c) => c.dashboard.keys.rollTest({ project_id })],
        ["credits.get", (c) => c.dashboard.credits.get({ project_id })],
        ["messages.list", (c) => c.dashboard.messages.list({ project_id })],
        ["messages.get", (c) => c.dashboard.messages.get({ project_id, message_id: message })],
        ["sender.get", (c) => c.dashboard.sender.get({ project_id })],
        ["sender.request", (c) => c.dashboard.sender.request({ project_id, name: "Acme", purpose: "codes" })],
        ["projects.setName", (c) => c.dashboard.projects.setName({ project_id, name: "Bob's now" })],
      ];
      const operatorCalls: Array<[string, (caller: typeof asBob) => Promise<unknown>]> = [
        ["projects.find", (c) => c.operator.projects.find({ query: project_id })],
        ["projects.get", (c) => c.operator.projects.get({ project_id })],
        ["projects.suspend", (c) => c.operator.projects.suspend({ project_id })],
        ["projects.reinstate", (c) => c.operator.projects.reinstate({ project_id })],
        ["credits.grant", (c) => c.operator.credits.grant({ project_id, amount: 5 })],
        ["keys.createLive", (c) => c.operator.keys.createLive({ project_id })],
        ["keys.get", (c) => c.operator.keys.get({ project_id, key_id: aliceKeyId })],
        ["keys.revoke", (c) => c.operator.keys.revoke({ key_id: aliceKeyId })],
        ["senderRequests.list", (c) => c.operator.senderRequests.list({})],
        ["senderRequests.approve", (c) => c.operator.senderRequests.approve({ request_id: "srq_x" })],
        [
          "senderRequests.refuse",
          (c) => c.operator.senderRequests.refuse({ request_id: "srq_x", reason: "no" }),
        ],
        ["audit.list", (c) => c.operator.audit.list({})],
      ];
      // A refusal the procedure answers as a value reads as "value:<code>".
      const codeOf = async (call: Promise<unknown>) => {
        try {
          const result = (await call) as { ok?: boolean; code?: string };
          return result.ok === false ? `value:${result.code}` : "ok";
        } catch (error) {
          return error instanceof TRPCError ? error.code : String(error);
        }
      };
      // Reads throw NOT_FOUND for the whole page; the read of one key and the
      // actions answer not-found as a value (the page shows the same 404).
      const asValue = new Set([
        "keys.get",
        "keys.createLive",
        "keys.revoke",
        "keys.rollTest",
        "sender.request",
        "projects.setName",
      ]);
      for (const [name, call] of dashboardCalls) {
        expect(await codeOf(call(asBob)), `dashboard.${name} as another account`).toBe(
          asValue.has(name) ? "value:project_not_found" : "NOT_FOUND",
        );
        expect(await codeOf(call(anonymous)), `dashboard.${name} without a session`).toBe("UNAUTHORIZED");
      }
      for (const [name, call] of operatorCalls) {
        expect(await codeOf(call(asBob)), `operator.${name} as a non-operator`).toBe("FORBIDDEN");
        expect(await codeOf(call(anonymous)), `operator.${name} without a session`).toBe("UNAUTHORIZED");
      }
      // The owner reads the same project through the same procedures.
      const asAlice = createInternalCaller({
        deps: t.app.deps,
        state: state(),
        viewer: await viewerOf("Alice Owner"),
      });
      // A key by id: the owner's own; another project's key or a malformed id is not found.
      expect(await asAlice.dashboard.keys.get({ project_id, key_id: aliceKeyId })).toMatchObject({
        ok: true,
        key: { id: aliceKeyId, mode: "test", prefix: expect.stringMatching(/^sk_test_/) },
      });
      const bobProject = (await createTestKey(t.request)).project_id;
      for (const [projectId, keyId, code] of [
        [bobProject, aliceKeyId, "project_not_found"],
        [project_id, "key_not-an-id", "key_not_found"],
      ] as const) {
        expect(
          await codeOf(asAlice.dashboard.keys.get({ project_id: projectId, key_id: keyId })),
          `${projectId} ${keyId}`,
        ).toBe(`value:${code}`);
      }
      // The operator's read of a key is scoped to the project named, and writes no audit row.
      const asOperator = createInternalCaller({
        deps: t.app.deps,
        state: state(),
        viewer: await viewerOf("olga-ops"),
      });
      const auditRows = () => t.app.db.prisma.auditEntry.count();
      const before = await auditRows();
      expect(await asOperator.operator.keys.get({ project_id, key_id: aliceKeyId })).toMatchObject({
        ok: true,
        key: { id: aliceKeyId },
      });
      expect(
        await asOperator.operator.keys.get({ project_id: bobProject, key_id: aliceKeyId }),
      ).toMatchObject({
        ok: false,
        code: "key_not_found",
      });
      expect(await auditRows()).toBe(before);
      expect(await asAlice.dashboard.messages.get({ project_id, message_id: message })).toMatchObject({
        message: { id: message, to: "+9955••••••56", status: expect.any(String) },
        timeline: [
          expect.objectContaining({ status: "queued" }),
          expect.objectContaining({ status: "submitted" }),
        ],
      });
      await aliceUnchanged();
    });
  });

  describe("changes refuse cross-site requests and foreign CSRF tokens", () => {
    let key: Key;
    let alice: { cookie: string; csrf: string };
    let mallory: { cookie: string; csrf: string };

    beforeAll(async () => {
      key = await claimedBy("Carol Csrf");
      alice = await signIn("Carol Csrf");
      mallory = await signIn("Mallory");
    });
    const create = (cookie: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      post(`/dashboard/projects/${key.project_id}/keys/live`, cookie, fields, headers);
    const liveKeys = () =>
      t.app.db.prisma.apiKey.count({ where: { projectId: key.project_id, mode: "live" } });

    it("refuses: no token, a wrong token, another session's token, cross-site, a foreign origin, a bad body", async () => {
      const refusals: Array<[string, Response]> = [
        ["no token", await create(alice.cookie, {})],
        ["wrong token", await create(alice.cookie, { csrf_token: "x".repeat(43) })],
        ["another session's token", await create(alice.cookie, { csrf_token: mallory.csrf })],
        [
          "cross-site",
          await create(alice.cookie, { csrf_token: alice.csrf }, { "Sec-Fetch-Site": "cross-site" }),
        ],
        [
          "same-site",
          await create(alice.cookie, { csrf_token: alice.csrf }, { "Sec-Fetch-Site": "same-site" }),
        ],
      ];
      const foreign = await t.request(`/dashboard/projects/${key.project_id}/keys/live`, {
        method: "POST",
        headers: { ...FORM, Cookie: alice.cookie, Origin: "https://evil.example" },
        body: `csrf_token=${alice.csrf}`,
      });
      refusals.push(["foreign origin", foreign]);
      for (const [what, response] of refusals) {
        expect(response.status, what).toBe(403);
        expect(await response.text(), what).toContain("Request refused");
      }
      expect(
        (await create(alice.cookie, { csrf_token: alice.csrf }, { "Content-Type": "application/json" }))
          .status,
      ).toBe(415);
      expect((await create(alice.cookie, { csrf_token: alice.csrf, pad: "a".repeat(9000) })).status).toBe(
        413,
      );
      expect(await liveKeys()).toBe(0);
      // The same form, from this dashboard: done.
      const created = await create(alice.cookie, { csrf_token: alice.csrf });
      expect(created.status).toBe(200);
      const html = await created.text();
      const apiKey = /value="(sk_live_[A-Za-z0-9_-]{43})"/.exec(html)?.[1];
      expect(apiKey).toBeDefined();
      secrets.add(apiKey!);
      expect(created.headers.get("cache-control")).toBe("no-store");
      expect(await liveKeys()).toBe(1);
      // Sign-out is a change too.
      expect((await post("/dashboard/sign-out", alice.cookie, { csrf_token: mallory.csrf })).status).toBe(
        403,
      );
      expect((await get("/dashboard/projects", alice.cookie)).status).toBe(200);
    });
  });

  describe("sessions end", () => {
    it("after 12 idle hours, sliding while in use; at sign-out; and a forged cookie is no session", async () => {
      const key = await claimedBy("Dora Idle");
      const dora = await signIn("Dora Idle");
      const page = `/dashboard/projects/${key.project_id}`;
      for (let i = 0; i < 3; i++) {
        t.clock.advance(11 * HOUR);
        expect((await get(page, dora.cookie)).status, `after ${(i + 1) * 11} h`).toBe(200);
      }
      t.clock.advance(12 * HOUR + 60_000);
      const idle = await get(page, dora.cookie);
      expect(idle.status).toBe(303);
      expect(idle.headers.get("location")).toBe(`/dashboard/sign-in?next=${encodeURIComponent(page)}`);
      expect(setCookie(idle, "sms_dashboard")).toMatch(/^sms_dashboard=; Path=\/dashboard; Max-Age=0;/);
      const refused = await post(`/dashboard/projects/${key.project_id}/keys/live`, dora.cookie, {
        csrf_token: dora.csrf,
      });
      expect(refused.status).toBe(401);
      expect(await t.app.db.prisma.apiKey.count({ where: { projectId: key.project_id, mode: "live" } })).toBe(
        0,
      );

      const again = await signIn("Dora Idle");
      const out = await post("/dashboard/sign-out", again.cookie, { csrf_token: again.csrf });
      expect(out.status).toBe(303);
      expect(out.headers.get("location")).toBe("/dashboard/sign-in?notice=signed_out");
      expect(setCookie(out, "sms_dashboard")).toMatch(/^sms_dashboard=; Path=\/dashboard; Max-Age=0;/);
      // The copied cookie is dead everywhere: the row is gone.
      expect((await get(page, again.cookie)).status).toBe(303);
      expect(await (await get("/dashboard/sign-in?notice=signed_out")).text()).toContain(
        "You are signed out.",
      );

      const tampered = `${again.cookie.slice(0, -2)}${again.cookie.at(-2) === "A" ? "B" : "A"}${again.cookie.slice(-1)}`;
      expect(tampered).not.toBe(again.cookie);
      expect((await get(page, tampered)).status).toBe(303);
      expect((await get(page, "sms_dashboard=not-a-sealed-value")).status).toBe(303);
    });

    it("an operator's session ends sooner: after an idle hour, and 12 hours after sign-in", async () => {
      const olga = await signIn("olga-ops");
      const holder = await signIn("Hana Holder");
      t.clock.advance(61 * 60_000);
      expect((await get("/dashboard/operator", olga.cookie)).status).toBe(303);
      expect((await get("/dashboard/projects", holder.cookie)).status).toBe(200);
      const again = await signIn("olga-ops");
      // In use every 50 minutes: alive for 700 minutes, ended at 730 (past 12 hours, 30 minutes idle).
      for (let minutes = 50; minutes <= 700; minutes += 50) {
        t.clock.advance(50 * 60_000);
        expect((await get("/dashboard/operator", again.cookie)).status, `after ${minutes} min`).toBe(200);
      }
      t.clock.advance(30 * 60_000);
      expect((await get("/dashboard/operator", again.cookie)).status).toBe(303);
    });

    it("signs out everywhere: every session of the identity ends, another identity's does not", async () => {
      const first = await signIn("Ivy Everywhere");
      const second = await signIn("Ivy Everywhere");
      const other = await signIn("Otto Other");
      const out = await post("/dashboard/sign-out-everywhere", first.cookie, { csrf_token: first.csrf });
      expect(out.status).toBe(303);
      expect(out.headers.get("location")).toBe("/dashboard/sign-in?notice=signed_out_everywhere");
      expect(setCookie(out, "sms_dashboard")).toMatch(/^sms_dashboard=; Path=\/dashboard; Max-Age=0;/);
      expect((await get("/dashboard/projects", second.cookie)).status).toBe(303);
      expect((await get("/dashboard/projects", other.cookie)).status).toBe(200);
      expect(
        await t.app.db.prisma.dashboardSession.count({
          where: { provider: "dev", subject: "ivy-everywhere" },
        }),
      ).toBe(0);
      // Without the session's CSRF token nothing ends.
      const kept = await signIn("Ivy Everywhere");
      expect((await post("/dashboard/sign-out-everywhere", kept.cookie, { csrf_token: "x" })).status).toBe(
        403,
      );
      expect((await get("/dashboard/projects", kept.cookie)).status).toBe(200);
    });
  });

  it("answers an unknown page, or a method a page does not take, in HTML, and the API's paths in the envelope", async () => {
    const pages: Array<[path: string, method: string, status: number, text: string]> = [
      ["/dashboard/no-such-page", "GET", 404, "Page not found"],
      ["/dashboard/projects/a/b/c/d", "POST", 404, "Page not found"],
      ["/claim/a-token/and/more", "GET", 404, "Claim link not found"],
      ["/dashboard/projects", "DELETE", 405, "That did not work"],
    ];
    for (const [path, method, status, text] of pages) {
      const response = await t.request(path, { method });
      expect(response.status, path).toBe(status);
      expect(response.headers.get("content-type"), path).toMatch(/^text\/html/);
      expect(response.headers.get("x-request-id"), path).toMatch(/^req_/);
      expect(await response.text(), path).toContain(text);
      if (status === 405) expect(response.headers.get("allow")).toBe("GET, HEAD");
    }
    // A prefix is a whole segment, and the API keeps its envelope.
    for (const path of ["/dashboardx", "/v1/no-such-route", "/claims"]) {
      const response = await t.request(path);
      expect(response.status, path).toBe(404);
      expect(((await response.json()) as { error: { code: string } }).error.code, path).toBe(
        "route_not_found",
      );
    }
  });

  it("keeps `next` inside the dashboard", async () => {
    for (const [next, location] of [
      ["/dashboard/projects/prj_x/keys", "/dashboard/projects/prj_x/keys"],
      ["https://evil.example/", "/dashboard/projects"],
      ["//evil.example/dashboard", "/dashboard/projects"],
      ["/dashboard/../claim", "/dashboard/projects"],
      ["/dashboard/sign-out", "/dashboard/projects"],
      ["/elsewhere", "/dashboard/projects"],
      // Encoded dot segments and backslashes (issue 25 L2): a browser would resolve them out of /dashboard.
      ["/dashboard/%2e%2e/%2e%2e/x", "/dashboard/projects"],
      ["/dashboard/%252e%252e/%252e%252e/x", "/dashboard/projects"],
      ["/dashboard/%5c..%5cx", "/dashboard/projects"],
    ] as const) {
      const response = await post("/dashboard/sign-in", null, { provider: "dev", name: "Nina Next", next });
      expect(response.headers.get("location"), next).toBe(location);
    }
  });

  it("serves pages with a strict CSP and no inline script or style; the two assets from our origin", async () => {
    const key = await claimedBy("Eve Csp");
    const eve = await signIn("Eve Csp");
    const paths = [
      "/dashboard/projects",
      `/dashboard/projects/${key.project_id}`,
      `/dashboard/projects/${key.project_id}/keys`,
      `/dashboard/projects/${key.project_id}/messages`,
      `/dashboard/projects/${key.project_id}/credits`,
      `/dashboard/projects/${key.project_id}/sender`,
    ];
    for (const path of paths) {
      const response = await get(path, eve.cookie);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-security-policy"), path).toBe(CSP);
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("cache-control")).toBe("no-store");
      const html = await response.text();
      expect(html, path).not.toMatch(/<script(?![^>]*\bsrc="\/dashboard\/assets\/)/);
      expect(html, path).not.toMatch(/<style|\sstyle=|\son[a-z]+=|https?:\/\//i);
      // Every visible control has a label.
      for (const match of html.matchAll(/<(input|select|textarea)\b([^>]*)>/g)) {
        const attributes = match[2] ?? "";
        if (/type="hidden"/.test(attributes)) continue;
        const id = /\bid="([^"]+)"/.exec(attributes)?.[1];
        expect(id && html.includes(`for="${id}"`), `${path}: ${match[0]}`).toBe(true);
      }
    }
    const signInPage = await get("/dashboard/sign-in");
    expect(signInPage.headers.get("content-security-policy")).toBe(CSP);
    const html = await (await get("/dashboard/projects", eve.cookie)).text();
    for (const src of html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)) {
      const asset = await get(src[1]!);
      expect(asset.status).toBe(200);
      expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(asset.headers.get("content-type")).toMatch(/^text\/(css|javascript)/);
    }
    expect((await get("/dashboard/assets/other.js")).status).toBe(404);
  });

  it("refuses every change of a suspended project on the server (revoking a key stays possible)", async () => {
    // issue 25 L4: the pages hide these forms on a suspended project; a posted form must not get through either.
    const key = await claimedBy("Sam Suspended");
    const sam = await signIn("Sam Suspended");
    const asOperator = createInternalCaller({
      deps: t.app.deps,
      state: state(),
      viewer: await viewerOf("olga-ops"),
    });
    expect(
      await asOperator.operator.projects.suspend({ project_id: key.project_id, reason: "test" }),
    ).toMatchObject({
      ok: true,
    });
    const where = { projectId: key.project_id };
    const keyRows = () => t.app.db.prisma.apiKey.findMany({ where, select: { id: true, revokedAt: true } });
    const requests = () => t.app.db.prisma.senderRequest.count({ where });
    const keysBefore = await keyRows();
    const base = `/dashboard/projects/${key.project_id}`;
    for (const [path, fields] of [
      [`${base}/keys/live`, {}],
      [`${base}/keys/roll-test`, {}],
      [`${base}/sender`, { name: "Acme", purpose: "login codes" }],
    ] as const) {
      const response = await post(path, sam.cookie, { ...fields, csrf_token: sam.csrf });
      expect(response.status, path).toBe(409);
      expect(await response.text(), path).toContain("suspended");
    }
    expect(await keyRows()).toEqual(keysBefore);
    expect(await requests()).toBe(0);
    // Revoking a (possibly leaked) key only takes access away: allowed while suspended.
    const testKey = keysBefore[0]!;
    const revoked = await post(`${base}/keys/${testKey.id}/revoke`, sam.cookie, { csrf_token: sam.csrf });
    expect(revoked.status).toBe(303);
    expect((await keyRows()).find((row) => row.id === testKey.id)?.revokedAt).not.toBeNull();
  });

  it("the operator searches by POST: never from the URL, and a pasted whole key is not written back", async () => {
    // issue 25 L3.
    const key = await claimedBy("Paula Pasted");
    const olga = await signIn("olga-ops");
    const home = await (await get("/dashboard/operator", olga.cookie)).text();
    expect(home).toMatch(/<form method="post" action="\/dashboard\/operator\/search"[^>]*role="search">/);
    // A query in the URL finds nothing and is not echoed.
    const byUrl = await (await get(`/dashboard/operator?q=${key.project_id}`, olga.cookie)).text();
    expect(byUrl).not.toContain(key.project_id);
    // By POST: the project is found by its key's prefix, and the prefix is kept in the field.
    const prefix = key.api_key.slice(0, 12);
    const found = await post("/dashboard/operator/search", olga.cookie, { q: prefix, csrf_token: olga.csrf });
    expect(found.status).toBe(200);
    const foundHtml = await found.text();
    expect(foundHtml).toContain(key.project_id);
    expect(foundHtml).toContain(`value="${prefix}"`);
    // A whole key: refused, and appears nowhere in the page.
    const pasted = await post("/dashboard/operator/search", olga.cookie, {
      q: key.api_key,
      csrf_token: olga.csrf,
    });
    expect(pasted.status).toBe(200);
    const pastedHtml = await pasted.text();
    expect(pastedHtml).toContain("whole API key");
    expect(pastedHtml).not.toContain(key.api_key.slice(12));
    expect(found.headers.get("location")).toBeNull();
  });

  it("the project search is a POST: the query is never in a URL, and a pasted whole key is refused without being written back", async () => {
    // issue 53 N2: the search box took a whole API key into the URL and wrote it back twice.
    const key = await claimedBy("Sami Search");
    const sami = await signIn("Sami Search");
    const base = `/dashboard/projects/${key.project_id}`;
    const overview = await (await get(base, sami.cookie)).text();
    expect(overview).toMatch(
      new RegExp(
        `<form method="post" action="${base}/search"[^>]*role="search"[^>]*><input type="hidden" name="csrf_token" value="${sami.csrf}">`,
      ),
    );
    const sent = await t.request(
      "/v1/messages",
      sendMessageRequest(key.api_key, "search-order-1", {
        to: "+995555123456",
        template: "verification_code",
        variables: { code: "4821" },
      }),
    );
    const messageId = ((await sent.json()) as { id: string }).id;
    // By POST: an id opens its page (a redirect with the id, never the query).
    const found = await post(`${base}/search`, sami.cookie, { q: messageId, csrf_token: sami.csrf });
    expect(found.status).toBe(303);
    expect(found.headers.get("location")).toBe(`${base}/messages/${messageId}`);
    // Without the session's CSRF token, or cross-site: refused.
    expect((await post(`${base}/search`, sami.cookie, { q: messageId })).status).toBe(403);
    // The query in a URL is no search at all, and is not echoed.
    const byUrl = await get(`${base}/search?q=${encodeURIComponent(key.api_key)}`, sami.cookie);
    expect(byUrl.status).toBeGreaterThanOrEqual(400);
    expect(await byUrl.text()).not.toContain(key.api_key.slice(12));
    // A whole key, alone or inside a pasted header: refused, and nowhere in the page or its headers.
    for (const q of [key.api_key, `Authorization: Bearer ${key.api_key}`, key.api_key.slice(0, 20)]) {
      const pasted = await post(`${base}/search`, sami.cookie, { q, csrf_token: sami.csrf });
      expect(pasted.status).toBe(400);
      expect(pasted.headers.get("location")).toBeNull();
      const html = await pasted.text();
      expect(html).toContain("looks like a whole API key");
      expect(html).toMatch(/<input id="project-search" name="q" value=""/);
      expect(html).not.toContain(key.api_key.slice(12, 20));
      expect(JSON.stringify([...pasted.headers])).not.toContain(key.api_key.slice(12, 20));
    }
    // The procedure refuses it too, for any other caller: not looked up as an Idempotency-Key.
    const caller = createInternalCaller({
      deps: t.app.deps,
      state: state(),
      viewer: await viewerOf("Sami Search"),
    });
    expect(await caller.dashboard.search({ project_id: key.project_id, query: ` ${key.api_key} ` })).toEqual({
      kind: "whole_key_given",
    });
    // A key's displayable prefix is an ordinary query (nothing matches it), written back as typed.
    const prefix = key.api_key.slice(0, 12);
    const byPrefix = await post(`${base}/search`, sami.cookie, { q: prefix, csrf_token: sami.csrf });
    expect(byPrefix.status).toBe(404);
    expect(await byPrefix.text()).toContain(`value="${prefix}"`);
    // The access log's lines carry the route, never the query.
    expect(t.logs.text).not.toContain(key.api_key.slice(12, 20));
  });

  it("answers 400 naming the field for values the database could not hold (days, cursors, control characters)", async () => {
    // issue 25 L6: each of these was a 500 page and an error log line.
    const key = await claimedBy("Vera Valid");
    const vera = await signIn("Vera Valid");
    const olga = await signIn("olga-ops");
    const base = `/dashboard/projects/${key.project_id}`;
    const farCursor = Buffer.from(
      JSON.stringify(["+275760-09-13T00:00:00.000Z", "led_01m83m72x0v8xf4xjtbady3d85"]),
    ).toString("base64url");
    const cases: Array<[string, Promise<Response>, string]> = [
      ["from", get(`${base}/messages?from=0000-01-01`, vera.cookie), "from"],
      ["to", get(`${base}/messages?to=2026-02-31`, vera.cookie), "to"],
      ["cursor", get(`${base}/credits?cursor=${farCursor}`, vera.cookie), "cursor"],
      [
        "purpose",
        post(`${base}/sender`, vera.cookie, { name: "Acme", purpose: "codes\u0000x", csrf_token: vera.csrf }),
        "purpose",
      ],
      [
        "reason",
        post(`/dashboard/operator/projects/${key.project_id}/suspend`, olga.cookie, {
          reason: "because\u0000",
          csrf_token: olga.csrf,
        }),
        "reason",
      ],
    ];
    for (const [name, pending, field] of cases) {
      const response = await pending;
      expect(response.status, name).toBe(400);
      expect(await response.text(), name).toContain(field);
    }
    expect(await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } })).toMatchObject({
      suspendedAt: null,
    });
    expect(await t.app.db.prisma.senderRequest.count({ where: { projectId: key.project_id } })).toBe(0);
  });

  it("shows when each key was last used", async () => {
    const key = await claimedBy("Finn Used");
    const finn = await signIn("Finn Used");
    const keysPage = () =>
      get(`/dashboard/projects/${key.project_id}/keys`, finn.cookie).then((r) => r.text());
    expect(await keysPage()).toContain("never");
    const read = await t.request("/v1/messages/msg_01m83m72x0v8xf4xjtbady3d85", {
      headers: { Authorization: `Bearer ${key.api_key}` },
    });
    expect(read.status).toBe(404);
    expect(await keysPage()).not.toContain(">never<");
  });

  it("the owner names the project on its settings page: the list and every project page's header show it, escaped; too long is refused", async () => {
    const key = await claimedBy("Nia Namer");
    const nia = await signIn("Nia Namer");
    const settings = `/dashboard/projects/${key.project_id}/settings`;
    const hostile = `<script>alert(1)</script> Nia & "Co"`;
    const saved = await post(settings, nia.cookie, { name: hostile, csrf_token: nia.csrf });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(`${settings}?notice=name_saved`);
    const escaped = "&lt;script&gt;alert(1)&lt;/script&gt; Nia &amp; &quot;Co&quot;";
    for (const path of [
      "/dashboard/projects",
      `/dashboard/projects/${key.project_id}`,
      `${settings}?notice=name_saved`,
    ]) {
      const page = await (await get(path, nia.cookie)).text();
      expect(page, path).toContain(`<strong class="project-name">${escaped}</strong>`);
      expect(page, path).not.toContain("<script>alert(1)");
    }
    expect(await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } })).toMatchObject({
      name: hostile,
    });
    // 65 characters: refused with the rule, the typed name written back escaped, nothing changed.
    const refused = await post(settings, nia.cookie, { name: `<${"n".repeat(63)}>`, csrf_token: nia.csrf });
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(page).toContain("A project&#39;s name is 1 to 64 characters");
    expect(page).toContain(`value="&lt;${"n".repeat(63)}&gt;"`);
    expect((await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } })).name).toBe(
      hostile,
    );
    // Without the CSRF token: refused, unchanged.
    expect((await post(settings, nia.cookie, { name: "No token" })).status).toBe(403);
    expect((await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } })).name).toBe(
      hostile,
    );
  });

  it("the overview's usage gives the delivery rate per mode", async () => {
    const key = await claimedBy("Rhea Rate");
    // The simulator's rejecting number: failed at once, in the test rate only.
    for (const to of ["+995500000001"]) {
      const sent = await t.request(
        "/v1/messages",
        sendMessageRequest(key.api_key, crypto.randomUUID(), {
          to,
          template: "verification_code",
          variables: { code: "4821" },
        }),
      );
      expect(sent.status, to).toBe(201);
    }
    const caller = createInternalCaller({
      deps: t.app.deps,
      state: state(),
      viewer: await viewerOf("Rhea Rate"),
    });
    const usage = await caller.dashboard.projects.usage({ project_id: key.project_id });
    expect(usage.totals.by_status.failed).toBe(1);
    expect(usage.delivery_rate).toBe(0);
    expect(usage.delivery_rate_by_mode).toEqual({ live: null, test: 0 });
    expect(
      (await caller.dashboard.projects.usage({ project_id: key.project_id, mode: "live" }))
        .delivery_rate_by_mode,
    ).toEqual(usage.delivery_rate_by_mode);
  });

  it("send-a-test takes an Idempotency-Key of 1 to 200 characters (the API's rule), not 255", async () => {
    const key = await claimedBy("Ida Key");
    const ida = await signIn("Ida Key");
    const tryPath = `/dashboard/projects/${key.project_id}/try`;
    const form = (idempotency_key: string) => ({
      csrf_token: ida.csrf,
      idempotency_key,
      template: "verification_code",
      locale: "en",
      code: "482913",
      minutes: "",
      to: "+995555123456",
    });
    const longest = "ნ".repeat(200);
    expect((await post(tryPath, ida.cookie, form(longest))).status).toBe(200);
    const tooLong = await post(tryPath, ida.cookie, form(`${longest}x`));
    expect(tooLong.status).toBe(400);
    expect(await tooLong.text()).toContain("idempotency_key_too_long");
    const sent = await t.app.db.prisma.message.count({ where: { projectId: key.project_id } });
    expect(sent).toBe(1);
    const caller = createInternalCaller({
      deps: t.app.deps,
      state: state(),
      viewer: await viewerOf("Ida Key"),
    });
    await expect(
      caller.dashboard.messages.sendTest({
        project_id: key.project_id,
        idempotency_key: "k".repeat(201),
        to: "+995555123456",
        template: "verification_code",
        locale: "en",
        variables: { code: "482913" },
      }),
    ).rejects.toThrow(/1 to 200 characters/);
  });

  it("send-a-test says what a live key would have left for the number, and a replay says nothing of it (issue 53, item 3)", async () => {
    const key = await claimedBy("Lia Limits");
    const lia = await signIn("Lia Limits");
    const tryPath = `/dashboard/projects/${key.project_id}/try`;
    const form = (idempotency_key: string) => ({
      csrf_token: lia.csrf,
      idempotency_key,
      template: "verification_code",
      locale: "en",
      code: "482913",
      minutes: "",
      to: "+995555000777",
    });
    await awayFromMinuteEdge();
    const said = async (response: Response) => {
      expect(response.status).toBe(200);
      return /<p id="live-recipient">([^<]*)/.exec(await response.text())?.[1] ?? null;
    };
    expect(await said(await post(tryPath, lia.cookie, form("lia-1")))).toBe(
      "On a live key this number would have 1 of 2 messages left this minute and 9 of 10 today ",
    );
    expect(await said(await post(tryPath, lia.cookie, form("lia-2")))).toBe(
      "On a live key this number would have 0 of 2 messages left this minute and 8 of 10 today ",
    );
    // The same form again is a replay: nothing counted, nothing said of it.
    expect(await said(await post(tryPath, lia.cookie, form("lia-2")))).toBeNull();
    const caller = createInternalCaller({
      deps: t.app.deps,
      state: state(),
      viewer: await viewerOf("Lia Limits"),
    });
    const third = await caller.dashboard.messages.sendTest({
      project_id: key.project_id,
      idempotency_key: "lia-3",
      to: "+995555000777",
      template: "verification_code",
      locale: "en",
      variables: { code: "482913" },
    });
    expect(third).toMatchObject({
      ok: true,
      live_recipient: { limit: { minute: 2, day: 10 }, remaining: { minute: 0, day: 7 } },
    });
  });

  it("serves none of the internal procedures on the public port's /trpc", async () => {
    const { cookie } = await signIn("Tina Trpc");
    for (const path of [
      "/trpc/dashboard.projects.list",
      "/trpc/operator.audit.list",
      `/trpc/dashboard.projects.list?input=${encodeURIComponent("{}")}`,
    ]) {
      const response = await get(path, cookie);
      expect(response.status, path).toBe(404);
      expect(await response.text(), path).not.toContain("prj_");
    }
    const post = await t.request("/trpc/operator.projects.suspend", {
      method: "POST",
      headers: { "Content-Type": "application/json", Cookie: cookie },
      body: JSON.stringify({ project_id: "prj_x" }),
    });
    expect(post.status).toBe(404);
  });

  it("never logs session cookies, claim tokens or API keys", () => {
    const log = t.logs.text;
    expect(log).toContain('"route":"/dashboard/projects/{project_id}"');
    expect(secrets.size).toBeGreaterThan(8);
    for (const secret of secrets) expect(log).not.toContain(secret);
    expect(log).not.toMatch(/995555123456/);
  });
});

describe("the development provider with NODE_ENV=production", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      backend: "pglite",
      env: {
        NODE_ENV: "production",
        DATABASE_URL: "postgresql://unused.invalid/sms",
        MESSAGE_ENCRYPTION_KEYS: "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        CLAIM_COOKIE_SECRET: SECRET,
        TEST_KEYS_PER_MINUTE: "100",
      },
    });
  });
  afterAll(() => t?.close());

  it("is refused on the dashboard and on the claim pages, and offered nowhere", async () => {
    expect(t.app.config.dashboard.devSignIn).toBe(false);
    const signIn = await t.request("/dashboard/sign-in", {
      method: "POST",
      headers: { ...FORM, ...SAME_ORIGIN },
      body: "provider=dev&name=Alice",
    });
    expect(signIn.status).toBe(400);
    expect(signIn.headers.getSetCookie()).toEqual([]);
    const html = await signIn.text();
    expect(html).toContain("Development sign-in is not available on this server.");
    expect(html).not.toContain("Development sign-in is on");
    expect(html).not.toContain('name="name"');
    expect(await t.app.db.prisma.dashboardSession.count()).toBe(0);

    const key = (await createTestKey((p, init) => t.request(p, init))) as Key;
    const claimPath = new URL(key.claim_url).pathname;
    const landing = await (await t.request(claimPath)).text();
    expect(landing).not.toContain("local developer");
    expect(landing).toContain("Sign-in is not available on this server right now");
    const claim = await t.request(`${claimPath}/sign-in`, {
      method: "POST",
      headers: { ...FORM, ...SAME_ORIGIN },
      body: "provider=dev&name=Alice",
    });
    expect(claim.status).toBe(400);
    expect(claim.headers.getSetCookie()).toEqual([]);
    expect(await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: key.project_id } })).toMatchObject({
      claimedAt: null,
    });
    const page = await (await t.request("/dashboard/sign-in")).text();
    expect(page).toContain("Sign-in is not available on this server.");

    // A development session left in the database (say, by a development server on the same
    // database) is no session here: its cookie is sent to sign in.
    const started = await t.app.deps.services.dashboard.sessions.start({
      identity: { provider: "dev", subject: "left-over", name: "Left Over" },
    });
    const sealer = await createCookieSealer(SECRET);
    const value = await sealer.seal("sms_dashboard", { t: started.token }, 3_600_000, t.clock.now());
    const refused = await t.request("/dashboard/projects", { headers: { Cookie: `sms_dashboard=${value}` } });
    expect(refused.status).toBe(303);
    expect(refused.headers.get("location")).toBe("/dashboard/sign-in?next=%2Fdashboard%2Fprojects");
  });
});
