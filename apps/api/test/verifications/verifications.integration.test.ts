// Verifications (issue 22) in process on both backends with a manual clock:
// expiry at expires_at (read, check, replay), the lifetime in the
// password-reset text, retention (the code hash cleared with the message
// text, the rows deleted with an unclaimed project's messages), the
// dashboard's log and conversion, and the recovery sweep of a row a killed
// start left without its message (issue 53, G3). Live keys with the fake
// uBill: a second start re-sends the same code (issue 53, item 2a).
import { newId, sha256Hex } from "@sms/crypto";
import { availableBackends } from "@sms/db/testing";
import { claimProject, developmentIdentity, maskRecipient, recipientFingerprintInput } from "@sms/domain";
import { type FakeUbill, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, startTestApp, type TestApp } from "../harness.ts";
import { insertLiveKey, until } from "../support/messages.ts";
import {
  codeInText,
  expectError,
  type VerificationJson,
  verificationClient,
} from "../support/verifications.ts";

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

  it("a row a killed start left without its message is swept, and never counted in the conversion (issue 53, G3)", async () => {
    const { start } = client();
    const owned = await createTestKey(t.request);
    const projectId = owned.project_id;
    // What the overview's conversion and the log read (the dashboard's views).
    const conversion = () =>
      t.app.store.verifications.conversion(projectId, new Date(t.clock.now().getTime() - DAY_MS));
    // An answered start: its row is confirmed (it has its message), the sweep leaves it alone.
    const answered = await json(await start(owned.api_key, key(), { to: "+995555100021" }));
    const answeredRow = await t.app.db.prisma.verification.findUniqueOrThrow({ where: { id: answered.id } });
    expect(answeredRow.unconfirmed).toBe(false);
    const startedBefore = await metric("test", "started");
    const before = await conversion();

    // What a process killed between the row (beforeSubmit) and its message (record) leaves: the row
    // alone, unconfirmed, pointing at a message that was never written.
    const to = "+995555100022";
    const orphanId = newId("vrf");
    const orphanMessageId = newId("msg");
    const written = await t.app.store.verifications.insert({
      id: orphanId,
      projectId,
      mode: "test",
      messageId: orphanMessageId,
      recipientMasked: maskRecipient(to),
      recipientFingerprint: await t.app.keyring.fingerprint(recipientFingerprintInput(projectId, to)),
      template: "verification_code",
      locale: "ka",
      codeHash: await t.app.keyring.fingerprint("a code hash"),
      codeCiphertext: await t.app.keyring.encrypt("000000", orphanId),
      status: "pending",
      attemptsRemaining: 5,
      expiresAt: new Date(t.clock.now().getTime() + 15 * 60_000),
      unconfirmed: true,
      now: t.clock.now(),
    });
    expect(written).toBe(true);
    // And one killed after its message was written: it has its message, so it stays (confirmed).
    const late = await json(await start(owned.api_key, key(), { to: "+995555100023" }));
    await t.app.db.prisma.verification.update({ where: { id: late.id }, data: { unconfirmed: true } });

    // Not a started verification anywhere: not in the conversion, not in the metric, not in the log.
    const during = await conversion();
    const startedOn = (c: typeof before) => c.days.reduce((sum, day) => sum + day.started, 0);
    expect(startedOn(during)).toBe(startedOn(before) + 1); // the late one only
    expect(await metric("test", "started")).toBe(startedBefore + 1);
    const listed = await t.app.store.verifications.list(projectId, { before: null, limit: 100 });
    expect(listed.map((row) => row.id).sort()).toEqual([answered.id, late.id].sort());

    // Younger than the recovery age (QUEUED_RECOVERY_SECONDS): its start may still be writing.
    expect(await job("queued-recovery")).toMatchObject({ unsentVerificationsDeleted: 0 });
    expect(await t.app.db.prisma.verification.count({ where: { id: orphanId } })).toBe(1);

    t.clock.advance(61_000);
    expect(await job("queued-recovery")).toMatchObject({ unsentVerificationsDeleted: 1 });
    expect(await t.app.db.prisma.verification.count({ where: { id: orphanId } })).toBe(0);
    expect(await t.app.db.prisma.verification.count({ where: { projectId, unconfirmed: true } })).toBe(0);
    // The answered ones are untouched, and a second round finds nothing.
    for (const id of [answered.id, late.id])
      expect((await t.app.db.prisma.verification.findUniqueOrThrow({ where: { id } })).status).toBe(
        "pending",
      );
    expect(await job("queued-recovery")).toMatchObject({ unsentVerificationsDeleted: 0 });
    expect(startedOn(await conversion())).toBe(startedOn(during));
  });
});

describe.each(backends)(
  "a second start re-sends the same code, live keys in process on %s (issue 53)",
  (backend) => {
    let t: TestApp;
    let fake: FakeUbill;
    let seq = 0;
    const key = () => `resend-${++seq}`;
    const client = () => verificationClient(t.request);
    const json = async (response: Response) => (await response.json()) as VerificationJson;
    /** The code in each SMS uBill received for `number`, in order. */
    const codesSentTo = (number: string) =>
      fake
        .sends()
        .filter((send) => send.body.includes(number.slice(1)))
        .map((send) => codeInText(String((send.json as { text?: string }).text ?? send.body)));

    beforeAll(async () => {
      fake = await startFakeUbill();
      t = await startTestApp({
        backend,
        env: {
          UBILL_BASE_URL: fake.baseUrl,
          UBILL_API_KEY: fake.apiKey,
          UBILL_DEFAULT_BRAND_ID: "1",
          MESSAGES_PER_MINUTE: "1000",
          RECIPIENT_MESSAGES_PER_MINUTE: "1000",
          RECIPIENT_MESSAGES_PER_DAY: "1000",
          VERIFICATIONS_PER_RECIPIENT_PER_MINUTE: "100",
          VERIFICATIONS_PER_RECIPIENT_PER_DAY: "100",
          // Room for the held second SMS below (its uBill answer comes after the checks made meanwhile).
          UBILL_SUBMIT_TIMEOUT_MS: "20000",
        },
      });
    });
    afterAll(async () => {
      await t?.close();
      await fake?.close();
    });

    it("the first SMS, typed in after the second start, approves the second verification", async () => {
      const { start, check, get } = client();
      const { apiKey } = await insertLiveKey(t.app.db.prisma, { credits: 10 });
      const to = "+995599200001";
      const first = await json(await start(apiKey, key(), { to, code_length: 8 }));
      t.clock.advance(90_000);
      // The first SMS is late: the user asks again.
      const second = await json(await start(apiKey, key(), { to, code_length: 8 }));
      expect(second.id).not.toBe(first.id);
      expect(second.message_id).not.toBe(first.message_id);
      const [sentFirst, sentSecond] = codesSentTo(to);
      expect(sentFirst).toMatch(/^\d{8}$/);
      expect(sentSecond).toBe(sentFirst);
      // The second carries on the first: its lifetime, and the first is canceled.
      expect(second).toMatchObject({
        status: "pending",
        attempts_remaining: 5,
        expires_at: first.expires_at,
      });
      expect((await json(await get(apiKey, first.id))).status).toBe("canceled");
      // Then the first SMS arrives and the user types its code.
      expect(await json(await check(apiKey, second.id, { code: sentFirst }))).toMatchObject({
        status: "approved",
      });
      // Neither the code nor a hash of it is in the clear: the ciphertext is dropped once approved.
      const row = await t.app.db.prisma.verification.findUniqueOrThrow({ where: { id: second.id } });
      expect(row.codeCiphertext).toBeNull();
      expect(JSON.stringify(row)).not.toContain(sentFirst!);
      // A start after the approval draws a new code.
      await start(apiKey, key(), { to, code_length: 8 });
      expect(codesSentTo(to)[2]).not.toBe(sentFirst);
    });

    it("a resend keeps the attempts left: wrong codes on the first count against the second, and its replay says so", async () => {
      const { start, check } = client();
      const { apiKey } = await insertLiveKey(t.app.db.prisma, { credits: 10 });
      const to = "+995599200002";
      const first = await json(await start(apiKey, key(), { to }));
      for (const wrong of ["000001", "000002", "000003"])
        expect((await json(await check(apiKey, first.id, { code: wrong }))).status).toBe("pending");
      const idem = key();
      const second = await json(await start(apiKey, idem, { to }));
      expect(second.attempts_remaining).toBe(2);
      const replay = await start(apiKey, idem, { to });
      expect(replay.status).toBe(200);
      expect(await json(replay)).toEqual(second);
      // Two more wrong codes end it; the right one no longer works.
      const [code] = codesSentTo(to);
      const wrong = code === "999999" ? "999998" : "999999";
      expect((await json(await check(apiKey, second.id, { code: wrong }))).status).toBe("pending");
      expect(await json(await check(apiKey, second.id, { code: wrong }))).toMatchObject({
        status: "max_attempts_reached",
        attempts_remaining: 0,
      });
      await expectError(await check(apiKey, second.id, { code: code! }), 409, "verification_not_pending");
      // A third start: the code is spent, so a new one with every attempt.
      const third = await json(await start(apiKey, key(), { to, code_length: 8 }));
      expect(third.attempts_remaining).toBe(5);
      expect(codesSentTo(to)[2]).not.toBe(code);
    });

    it("checks of the first made while the second start's SMS is in flight count too; an approval meanwhile spends the code", async () => {
      const { start, check, get } = client();
      const { apiKey } = await insertLiveKey(t.app.db.prisma, { credits: 10 });
      /** A second start whose SMS uBill holds for a while; `meanwhile` runs once uBill has it. */
      const resendWhile = async (
        to: string,
        meanwhile: (first: VerificationJson, code: string) => Promise<void>,
      ) => {
        const first = await json(await start(apiKey, key(), { to }));
        const [code] = codesSentTo(to);
        fake.replyToNumber(to, { kind: "slow", delayMs: 5_000 });
        const second = start(apiKey, key(), { to });
        await until(() => codesSentTo(to).length === 2, 10_000);
        await meanwhile(first, code!);
        return { first, second: await json(await second), code: code! };
      };

      // Two wrong codes typed for the first while the second SMS is on its way: the second has three left.
      const wrong = await resendWhile("+995599200011", async (first, code) => {
        const other = code === "999999" ? "999998" : "999999";
        for (const remaining of [4, 3])
          expect(await json(await check(apiKey, first.id, { code: other }))).toMatchObject({
            status: "pending",
            attempts_remaining: remaining,
          });
      });
      expect(wrong.second).toMatchObject({ status: "pending", attempts_remaining: 3 });
      expect(await json(await get(apiKey, wrong.second.id))).toMatchObject({ attempts_remaining: 3 });
      expect((await json(await get(apiKey, wrong.first.id))).status).toBe("canceled");

      // The first approved meanwhile: the code is spent, the second cannot be approved with it.
      const approved = await resendWhile("+995599200012", async (first, code) => {
        expect((await json(await check(apiKey, first.id, { code }))).status).toBe("approved");
      });
      expect((await json(await get(apiKey, approved.first.id))).status).toBe("approved");
      expect((await json(await get(apiKey, approved.second.id))).status).toBe("canceled");
      await expectError(
        await check(apiKey, approved.second.id, { code: approved.code }),
        409,
        "verification_not_pending",
      );
    });

    it("only the same template and code length within the lifetime re-sends the code", async () => {
      const { start } = client();
      const { apiKey } = await insertLiveKey(t.app.db.prisma, { credits: 20 });
      const to = "+995599200003";
      await start(apiKey, key(), { to, code_length: 8 });
      // Another template: another code (and the pending one is canceled, as before).
      await start(apiKey, key(), { to, code_length: 8, template: "login_code" });
      // Another length: another code.
      await start(apiKey, key(), { to, code_length: 7, template: "login_code" });
      // Same template and length again: the last code once more.
      const last = await json(await start(apiKey, key(), { to, code_length: 7, template: "login_code" }));
      // Past its lifetime (10 minutes from the one it carried on): a new code.
      t.clock.set(new Date(Date.parse(last.expires_at)));
      await start(apiKey, key(), { to, code_length: 7, template: "login_code" });
      const codes = codesSentTo(to);
      expect(codes).toHaveLength(5);
      expect(codes[1]).not.toBe(codes[0]);
      expect(codes[2]).toHaveLength(7);
      expect(codes[3]).toBe(codes[2]);
      expect(codes[4]).not.toBe(codes[3]);
    });
  },
);
