// Verifications (issue 22) in process on both backends with a manual clock:
// expiry at expires_at (read, check, replay), the lifetime in the
// password-reset text, retention (the code hash cleared with the message
// text, the rows deleted with an unclaimed project's messages), and the
// dashboard's log and conversion.
import { sha256Hex } from "@sms/crypto";
import { availableBackends } from "@sms/db/testing";
import { claimProject, developmentIdentity } from "@sms/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, startTestApp, type TestApp } from "./harness.ts";
import { expectError, type VerificationJson, verificationClient } from "./support/verifications.ts";

const backends = await availableBackends();
const DAY_MS = 86_400_000;

describe.each(backends)("verifications in process on %s", (backend) => {
  let t: TestApp;
  let seq = 0;
  const key = () => `vi-${++seq}`;
  const client = () => verificationClient(t.request);
  const json = async (response: Response) => (await response.json()) as VerificationJson;

  beforeAll(async () => {
    t = await startTestApp({
      backend,
      env: {
        TEST_KEYS_PER_MINUTE: "1000",
        TEST_KEYS_PER_DAY: "1000",
        VERIFICATION_LIFETIME_MINUTES: "15",
        MESSAGE_TEXT_RETENTION_DAYS: "7",
        CLAIM_COOKIE_SECRET: "verifications-integration-cookie-secret-0123",
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** sms_verifications_total{mode, event} from the app's registry. */
  const metric = async (mode: string, event: string) => {
    const text = await (await t.app.metrics.response()).text();
    const line = text
      .split("\n")
      .find((l) => l.startsWith(`sms_verifications_total{mode="${mode}",event="${event}"}`));
    return line ? Number(line.split(" ").pop()) : 0;
  };

  const job = (name: string) => {
    const found = t.app.jobs.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no job ${name}`);
    return found.run();
  };

  it("expires at expires_at (injected clock): reads expired, a check is 409 and writes it down, the replay is unchanged", async () => {
    const { start, check, get } = client();
    const apiKey = (await createTestKey(t.request)).api_key;
    const idem = key();
    const started = await json(await start(apiKey, idem, { to: "+995555100001" }));
    expect(Date.parse(started.expires_at) - Date.parse(started.created_at)).toBe(15 * 60_000);
    t.clock.advance(15 * 60_000 - 1_000);
    expect(await json(await check(apiKey, started.id, { code: "123456" }))).toMatchObject({
      status: "pending",
      attempts_remaining: 4,
    });
    t.clock.advance(1_000);
    const read = await json(await get(apiKey, started.id));
    expect(read).toMatchObject({ status: "expired", attempts_remaining: 4, updated_at: started.expires_at });
    const expiredBefore = await metric("test", "expired");
    const refused = await expectError(
      await check(apiKey, started.id, { code: "000000" }),
      409,
      "verification_not_pending",
    );
    expect(refused.error.message).toContain("expired");
    expect(await metric("test", "expired")).toBe(expiredBefore + 1);
    const row = await t.app.db.prisma.verification.findUniqueOrThrow({ where: { id: started.id } });
    expect(row.status).toBe("expired");
    expect(row.attemptsRemaining).toBe(4);
    // Still expired after the write, and the start's replay is its first answer.
    expect((await json(await get(apiKey, started.id))).status).toBe("expired");
    const replay = await start(apiKey, idem, { to: "+995555100001" });
    expect(replay.status).toBe(200);
    expect(await json(replay)).toEqual(started);
  });

  it("password_reset_code says the verification's lifetime in minutes", async () => {
    const { start } = client();
    const apiKey = (await createTestKey(t.request)).api_key;
    const started = await json(
      await start(apiKey, key(), {
        to: "+995555100002",
        template: "password_reset_code",
        locale: "en",
        code_length: 5,
      }),
    );
    const [row] = await t.app.db.prisma.$queryRaw<Array<{ text_ciphertext: Uint8Array }>>`
      SELECT text_ciphertext FROM messages WHERE id = ${started.message_id}`;
    expect(await t.app.keyring.decrypt(row!.text_ciphertext, started.message_id)).toBe(
      "Your password reset code is 00000. It expires in 15 minutes.",
    );
  });

  it("clears the code hash with the message text, and deletes the rows with an unclaimed project's messages", async () => {
    const { start, check, get } = client();
    const apiKey = (await createTestKey(t.request)).api_key;
    const approved = await json(await start(apiKey, key(), { to: "+995555100003" }));
    expect((await json(await check(apiKey, approved.id, { code: "000000" }))).status).toBe("approved");
    expect(
      (await t.app.db.prisma.verification.findUniqueOrThrow({ where: { id: approved.id } })).codeHash,
    ).not.toBeNull();

    // The message settles (delivered), then its retention passes.
    t.clock.advance(60_000);
    await job("status-check");
    t.clock.advance(8 * DAY_MS);
    await job("message-text-purge");
    const purged = await t.app.db.prisma.verification.findUniqueOrThrow({ where: { id: approved.id } });
    expect(purged.codeHash).toBeNull();
    expect(
      (await t.app.db.prisma.message.findFirstOrThrow({ where: { id: approved.message_id } })).textPurgedAt,
    ).not.toBeNull();
    // Without its hash, no code matches any more; the verification still reads.
    await expectError(await check(apiKey, approved.id, { code: "000000" }), 409, "verification_not_pending");
    expect((await json(await get(apiKey, approved.id))).status).toBe("approved");

    t.clock.advance(23 * DAY_MS);
    await job("unclaimed-messages-purge");
    expect(await t.app.db.prisma.verification.count({ where: { id: approved.id } })).toBe(0);
    await expectError(await get(apiKey, approved.id), 404, "verification_not_found");
  });

  it("the dashboard: a project's verifications log and, on the overview, conversion per day and the median time to approve", async () => {
    const { start, check } = client();
    const owned = await createTestKey(t.request);
    const token = owned.claim_url.slice(owned.claim_url.lastIndexOf("/") + 1);
    const identity = developmentIdentity("Vera Verify")!;
    const claimed = await claimProject(
      { store: t.app.store, config: { freeCredits: 50 } },
      {
        tokenHash: await sha256Hex(token),
        identity: { provider: "dev", subject: identity.subject, email: null, name: "Vera Verify" },
        now: t.clock.now(),
      },
    );
    expect(claimed.ok).toBe(true);
    const signIn = await t.request("/dashboard/sign-in", {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "Sec-Fetch-Site": "same-origin",
        Origin: "http://api.test",
      },
      body: new URLSearchParams({ provider: "dev", name: "Vera Verify" }).toString(),
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers
      .getSetCookie()
      .find((header) => header.startsWith("sms_dashboard="))!
      .split(";")[0]!;
    const page = (path: string) => t.request(path, { headers: { Cookie: cookie } });

    const numbers = ["+995555100011", "+995555100012", "+995555100013"];
    const started = [];
    for (const to of numbers) started.push(await json(await start(owned.api_key, key(), { to })));
    t.clock.advance(40_000);
    expect((await json(await check(owned.api_key, started[0]!.id, { code: "000000" }))).status).toBe(
      "approved",
    );
    expect(
      (await json(await check(owned.api_key, started[1]!.id, { code: "123456" }))).attempts_remaining,
    ).toBe(4);
    // Another project's verification is not in this log.
    const other = await createTestKey(t.request);
    const theirs = await json(await start(other.api_key, key(), { to: "+995555100019" }));

    const log = await page(`/dashboard/projects/${owned.project_id}/verifications`);
    expect(log.status).toBe(200);
    const html = await log.text();
    for (const verification of started) {
      expect(html).toContain(verification.id);
      expect(html).toContain(`/dashboard/projects/${owned.project_id}/messages/${verification.message_id}`);
    }
    expect(html).not.toContain(theirs.id);
    for (const to of numbers) {
      expect(html).not.toContain(to);
      expect(html).toContain(`+9955••••••${to.slice(-2)}`);
    }
    expect(html).toMatch(/status-approved/);
    expect(html).toMatch(/status-pending/);

    const overview = await page(`/dashboard/projects/${owned.project_id}`);
    expect(overview.status).toBe(200);
    const text = await overview.text();
    expect(text).toContain("Verifications, last 30 days");
    expect(text).toContain("33.3 %");
    expect(text).toContain("40 s");
    // Someone else's project is not found.
    expect((await page(`/dashboard/projects/${other.project_id}/verifications`)).status).toBe(404);
  });
});
