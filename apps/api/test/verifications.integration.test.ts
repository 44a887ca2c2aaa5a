// Verifications (issue 22) in process on both backends with a manual clock:
// expiry at expires_at (read, check, replay), the lifetime in the
// password-reset text, retention (the code hash cleared with the message
// text, the rows deleted with an unclaimed project's messages), and the
// dashboard's log and conversion.
import { availableBackends } from "@sms/db/testing";
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
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

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
    const refused = await expectError(
      await check(apiKey, started.id, { code: "000000" }),
      409,
      "verification_not_pending",
    );
    expect(refused.error.message).toContain("expired");
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
      (await t.app.db.prisma.message.findUniqueOrThrow({ where: { id: approved.message_id } })).textPurgedAt,
    ).not.toBeNull();
    // Without its hash, no code matches any more; the verification still reads.
    await expectError(await check(apiKey, approved.id, { code: "000000" }), 409, "verification_not_pending");
    expect((await json(await get(apiKey, approved.id))).status).toBe("approved");

    t.clock.advance(23 * DAY_MS);
    await job("unclaimed-messages-purge");
    expect(await t.app.db.prisma.verification.count({ where: { id: approved.id } })).toBe(0);
    await expectError(await get(apiKey, approved.id), 404, "verification_not_found");
  });
});
