// Privacy issue, points 1, 2 and 4, proven in the database: the whole app
// in-process (startTestApp, ManualClock) on both backends. Raw rows of every
// table hold no plaintext number or text; ciphertexts only open with their own
// message id; retention empties the ciphertext columns while the API keeps
// answering; idempotency records end after 24 hours; rotation re-keys rows so
// the old key can go. Verifications (issue 22): their codes are nowhere in
// the database (only a keyed hash) nor in the logs.
import { DecryptError, parseKeyring } from "@sms/crypto";
import { availableBackends } from "@sms/db/testing";
import type { RotateMessageKeysCounts } from "@sms/domain";
import { type FakeUbill, startFakeUbill } from "@sms/provider-ubill/testing";
import { renderMessage } from "@sms/templates";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runOperatorCli } from "../../../operator/src/cli.ts";
import { createApp } from "../../src/app.ts";
import { parseEnv } from "../../src/config/index.ts";
import { createInternalClient } from "../../src/internal-client.ts";
import { createTestKey, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";
import { bytesAsText, findLeaks, type Haystack, type Needle, numberNeedles } from "../support/leaks.ts";
import { insertLiveKey } from "../support/messages.ts";
import { codeInText, type VerificationJson, verificationClient } from "../support/verifications.ts";

const backends = await availableBackends();

// Recognisable key material: 32 bytes spelling a phrase.
const K1 = `k1:${Buffer.from("privacy-test-key-one-32-bytes!!!").toString("base64")}`;
const INTERNAL_TOKEN = "privacy-test-internal-token-3f5a7c9e1b2d4f6a";
const K2 = `k2:${Buffer.from("privacy-test-key-two-32-bytes!!!").toString("base64")}`;

const DAY_MS = 86_400_000;

type Send = { to: string; template: string; variables: Record<string, string>; locale: "en" | "ka" };
type MessageBody = {
  id: string;
  to: string;
  status: string;
  segments: number;
  created_at: string;
  updated_at: string;
};
type RawMessage = {
  id: string;
  recipient_ciphertext: Uint8Array | null;
  text_ciphertext: Uint8Array | null;
  text_purged_at: Date | null;
};

function rendered(send: Send): string {
  const result = renderMessage({ template: send.template, variables: send.variables, locale: send.locale });
  if (!result.ok) throw new Error(result.message);
  return result.text;
}

describe.each(backends)("privacy in the database on %s", (backend) => {
  let t: TestApp;
  let fake: FakeUbill;
  const needles: Needle[] = [];
  const sends: Send[] = [];
  let sequence = 0;

  /** Sends one message with a fresh recognisable code; remembers what must never be stored. */
  async function send(apiKey: string, to: string, overrides: Partial<Send> = {}, idempotencyKey?: string) {
    sequence++;
    const generated = `7${String(sequence).padStart(2, "0")}93${String(sequence).padStart(3, "0")}`;
    const body: Send = {
      to,
      template: "verification_code",
      variables: { code: generated },
      locale: "en",
      ...overrides,
    };
    const code = body.variables.code!;
    sends.push(body);
    needles.push(...numberNeedles(`number ${to}`, to), { label: `code ${code}`, value: code });
    needles.push({ label: `text ${sequence}`, value: rendered(body) });
    const response = await t.request(
      "/v1/messages",
      sendMessageRequest(apiKey, idempotencyKey ?? `idem-${sequence}`, body),
    );
    return { response, body: (await response.json()) as MessageBody };
  }

  async function newKey() {
    const key = await createTestKey(t.request);
    const token = key.claim_url.split("/").pop()!;
    needles.push({ label: "api key", value: key.api_key }, { label: "claim token", value: token });
    return key;
  }

  async function rawMessage(id: string): Promise<RawMessage> {
    const [row] = await t.app.db.prisma.$queryRaw<RawMessage[]>`
      SELECT id, recipient_ciphertext, text_ciphertext, text_purged_at FROM messages WHERE id = ${id}`;
    if (!row) throw new Error(`no message ${id}`);
    return row;
  }

  /** Every row of every table, each value as text (bytea as UTF-8, Latin-1, hex, base64 and escape). */
  async function everyRow(): Promise<Haystack[]> {
    const prisma = t.app.db.prisma;
    const tables = await prisma.$queryRaw<Array<{ name: string }>>`
      SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`;
    const haystacks: Haystack[] = [];
    for (const { name } of tables) {
      const quoted = `"${name.replace(/"/g, '""')}"`;
      const rows = await prisma.$queryRawUnsafe<Array<Record<string, unknown>>>(`SELECT * FROM ${quoted}`);
      const json = await prisma.$queryRawUnsafe<Array<{ j: string }>>(
        `SELECT row_to_json(t)::text AS j FROM ${quoted} t`,
      );
      const bytea = await prisma.$queryRaw<Array<{ column: string }>>`
        SELECT column_name AS column FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ${name} AND data_type = 'bytea'`;
      const escaped = [];
      for (const { column } of bytea) {
        const col = `"${column.replace(/"/g, '""')}"`;
        escaped.push(
          ...(await prisma.$queryRawUnsafe<Array<{ e: string | null }>>(
            `SELECT encode(${col}, 'escape') AS e FROM ${quoted}`,
          )),
        );
      }
      const text = [
        ...rows.map((row) =>
          Object.values(row)
            .map((value) =>
              value instanceof Uint8Array
                ? bytesAsText(value)
                : JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? String(v) : v)),
            )
            .join("\n"),
        ),
        ...json.map((row) => row.j),
        ...escaped.map((row) => row.e ?? ""),
      ].join("\n");
      haystacks.push({ where: `table ${name}`, text });
    }
    return haystacks;
  }

  const job = (name: string) => {
    const found = t.app.jobs.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no job ${name}`);
    return found.run();
  };

  beforeAll(async () => {
    fake = await startFakeUbill();
    t = await startTestApp({
      backend,
      env: {
        UBILL_BASE_URL: fake.baseUrl,
        UBILL_API_KEY: fake.apiKey,
        UBILL_DEFAULT_BRAND_ID: "1",
        MESSAGE_ENCRYPTION_KEYS: K1,
        MESSAGE_TEXT_RETENTION_DAYS: "7",
        SIMULATOR_DELIVERY_DELAY_MS: "5000",
      },
    });
    needles.push(
      { label: "key material k1", value: K1.slice(3) },
      { label: "key material k2", value: K2.slice(3) },
    );
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it("stores no plaintext number, text, code or key in any column of any table", async () => {
    const { api_key } = await newKey();
    const created = [
      await send(api_key, "+995577246813"),
      await send(api_key, "+995591357924", { template: "login_code", locale: "ka" }),
      await send(api_key, "+995568024613", {
        template: "password_reset_code",
        variables: { code: "40917358", minutes: "45" },
      }),
      await send(api_key, "+995500000001"),
      await send(api_key, "+995500000003"),
      await send(api_key, "+995500000004"),
    ];
    expect(created.map((c) => c.response.status)).toEqual([201, 201, 201, 201, 201, 201]);
    t.clock.advance(6_000);
    await job("status-check");

    const haystacks = await everyRow();
    expect(haystacks.map((h) => h.where)).toEqual(
      expect.arrayContaining(["table messages", "table idempotency_records"]),
    );
    expect(findLeaks(haystacks, needles)).toEqual([]);

    // Control: the scan does find plaintext stored as bytea or in JSON.
    const prisma = t.app.db.prisma;
    const control = created[0]!.body.id;
    const original = await rawMessage(control);
    await prisma.message.updateMany({
      where: { id: control },
      data: { textCiphertext: new TextEncoder().encode(rendered(sends.at(-6)!)) },
    });
    await prisma.auditEntry.create({
      data: { id: "aud_control", actor: "test", action: "control", details: { note: sends.at(-5)!.to } },
    });
    const leaks = findLeaks(await everyRow(), needles);
    expect(leaks.some((leak) => leak.startsWith("text ") && leak.includes("table messages"))).toBe(true);
    expect(leaks.some((leak) => leak.includes("table audit_log"))).toBe(true);
    await prisma.message.updateMany({
      where: { id: control },
      data: { textCiphertext: original.text_ciphertext as Uint8Array<ArrayBuffer> },
    });
    await prisma.auditEntry.delete({ where: { id: "aud_control" } });

    // The ciphertexts are there, and are what the keyring makes of them.
    const keyring = t.app.keyring;
    for (const [index, { body }] of created.entries()) {
      const row = await rawMessage(body.id);
      expect(await keyring.decrypt(row.recipient_ciphertext!, body.id)).toBe(sends.at(-6 + index)!.to);
      expect(await keyring.decrypt(row.text_ciphertext!, body.id)).toBe(rendered(sends.at(-6 + index)!));
      expect(keyring.keyIdOf(row.text_ciphertext!)).toBe("k1");
    }
  });

  it("stores no verification code: only its keyed hash, in no column of any table", async () => {
    const { start, check } = verificationClient(t.request);
    const { apiKey } = await insertLiveKey(t.app.db.prisma, { credits: 20 });
    const codes: string[] = [];
    for (const [index, to] of ["+995577246899", "+995591357988"].entries()) {
      const response = await start(apiKey, `privacy-vrf-${index}`, { to, code_length: 8, locale: "en" });
      expect(response.status).toBe(201);
      const started = (await response.json()) as VerificationJson;
      const sent = fake.sends().at(-1)!;
      const code = codeInText(String((sent.json as { text?: string }).text ?? sent.body));
      // A typed wrong code is the user's secret too.
      const typed = `9${code.slice(1)}` === code ? `8${code.slice(1)}` : `9${code.slice(1)}`;
      codes.push(code, typed);
      needles.push(...numberNeedles(`number ${to}`, to), { label: `verification code ${code}`, value: code });
      needles.push({ label: `typed code ${typed}`, value: typed });
      expect((await check(apiKey, started.id, { code: typed })).status).toBe(200);
      const approved = await check(apiKey, started.id, { code });
      expect(((await approved.json()) as VerificationJson).status).toBe("approved");
    }
    const haystacks = await everyRow();
    expect(haystacks.map((h) => h.where)).toContain("table verifications");
    expect(findLeaks(haystacks, needles)).toEqual([]);
    // What is stored is the keyring's HMAC of (id, code), and it is what a check compares with.
    const rows = await t.app.db.prisma.verification.findMany({ where: { mode: "live" } });
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.codeHash).toMatch(/^k1:[0-9a-f]{64}$/);
    // Control: the same scan finds a code stored in the clear.
    await t.app.db.prisma.verification.update({ where: { id: rows[0]!.id }, data: { template: codes[0]! } });
    expect(findLeaks(await everyRow(), needles).some((leak) => leak.includes("table verifications"))).toBe(
      true,
    );
    await t.app.db.prisma.verification.update({
      where: { id: rows[0]!.id },
      data: { template: "verification_code" },
    });
  });

  it("binds each ciphertext to its message id: swapped blobs do not decrypt", async () => {
    const { api_key } = await newKey();
    const a = (await send(api_key, "+995577110022")).body;
    const b = (await send(api_key, "+995577110033")).body;
    const keyring = t.app.keyring;
    const rowA = await rawMessage(a.id);
    await expect(keyring.decrypt(rowA.text_ciphertext!, b.id)).rejects.toMatchObject({
      reason: "authentication_failed",
    });

    await t.app.db.prisma.$executeRaw`
      UPDATE messages SET
        text_ciphertext = CASE id WHEN ${a.id} THEN (SELECT text_ciphertext FROM messages WHERE id = ${b.id})
                                  ELSE (SELECT text_ciphertext FROM messages WHERE id = ${a.id}) END,
        recipient_ciphertext = CASE id WHEN ${a.id} THEN (SELECT recipient_ciphertext FROM messages WHERE id = ${b.id})
                                       ELSE (SELECT recipient_ciphertext FROM messages WHERE id = ${a.id}) END
      WHERE id IN (${a.id}, ${b.id})`;
    for (const id of [a.id, b.id]) {
      const row = await rawMessage(id);
      await expect(keyring.decrypt(row.text_ciphertext!, id)).rejects.toBeInstanceOf(DecryptError);
      await expect(keyring.decrypt(row.recipient_ciphertext!, id)).rejects.toBeInstanceOf(DecryptError);
    }
    // The status check decrypts a number only for a provider that reports per
    // number (uBill); the simulator never needs it, so these test messages
    // settle without their blobs ever being read.
    t.clock.advance(6_000);
    expect(await job("status-check")).toMatchObject({ errors: 0, delivered: 2 });
    const read = await t.request(`/v1/messages/${a.id}`, { headers: { Authorization: `Bearer ${api_key}` } });
    expect(((await read.json()) as MessageBody).status).toBe("delivered");
  });

  it("forgets idempotency records after 24 hours: the same key then makes a new message", async () => {
    const { api_key } = await newKey();
    const first = await send(api_key, "+995577220044", {}, "idem-24h");
    expect(first.response.status).toBe(201);
    const replay = await t.request("/v1/messages", sendMessageRequest(api_key, "idem-24h", sends.at(-1)));
    expect(replay.status).toBe(200);
    expect(((await replay.json()) as MessageBody).id).toBe(first.body.id);

    t.clock.advance(DAY_MS - 60_000);
    expect(await job("idempotency-purge")).toEqual({ purged: 0 });
    t.clock.advance(60_000);
    expect((await job("idempotency-purge")).purged).toBeGreaterThanOrEqual(1);
    expect(await t.app.db.prisma.idempotencyRecord.count({ where: { key: "idem-24h" } })).toBe(0);
    expect((await job("rate-limit-purge")).purged).toBeGreaterThanOrEqual(1);

    const again = await t.request("/v1/messages", sendMessageRequest(api_key, "idem-24h", sends.at(-1)));
    expect(again.status).toBe(201);
    expect(((await again.json()) as MessageBody).id).not.toBe(first.body.id);
  });

  it("purges text and number after retention; the API still returns the message unchanged", async () => {
    const { api_key } = await newKey();
    const auth = { headers: { Authorization: `Bearer ${api_key}` } };
    const ids = [
      (await send(api_key, "+995577330055")).body.id,
      (await send(api_key, "+995577330066", { locale: "ka" })).body.id,
      (await send(api_key, "+995500000001")).body.id,
      (await send(api_key, "+995500000003")).body.id,
      (await send(api_key, "+995500000004")).body.id,
    ];
    t.clock.advance(6_000);
    await job("status-check");
    // Sent later: still `submitted` when retention is reached, so it keeps its number until final.
    const pending = (await send(api_key, "+995577330077")).body.id;

    const before = new Map<string, unknown>();
    for (const id of [...ids, pending])
      before.set(id, await (await t.request(`/v1/messages/${id}`, auth)).json());
    expect([...before.values()].map((m) => (m as MessageBody).status)).toEqual([
      "delivered",
      "delivered",
      "failed",
      "unknown",
      "undeliverable",
      "submitted",
    ]);

    t.clock.advance(7 * DAY_MS - 60_000);
    await job("message-text-purge");
    expect((await rawMessage(ids[0]!)).text_ciphertext).not.toBeNull();

    t.clock.advance(120_000);
    expect((await job("message-text-purge")).purged).toBeGreaterThanOrEqual(ids.length);
    for (const id of ids) {
      const row = await rawMessage(id);
      expect(row.recipient_ciphertext).toBeNull();
      expect(row.text_ciphertext).toBeNull();
      expect(row.text_purged_at).toEqual(t.clock.now());
      const after = await t.request(`/v1/messages/${id}`, auth);
      expect(after.status).toBe(200);
      expect(await after.json()).toEqual(before.get(id));
    }
    expect((await rawMessage(pending)).recipient_ciphertext).not.toBeNull();

    // Once final, the held message goes too.
    await job("status-check");
    await job("message-text-purge");
    expect((await rawMessage(pending)).text_ciphertext).toBeNull();
    const held = (await (await t.request(`/v1/messages/${pending}`, auth)).json()) as MessageBody;
    expect(held).toMatchObject({ status: "delivered", to: "+9955••••••77", segments: 1 });
  });

  it("rotates to a new key; with the old key removed every row still decrypts", async () => {
    const { api_key } = await newKey();
    const created = [
      (await send(api_key, "+995577440088")).body.id,
      (await send(api_key, "+995577440099", { template: "login_code" })).body.id,
    ];
    // The operator's command, against the service restarted with the new key
    // first and the old one after it (an instance on the same database).
    const rotated = await createApp(
      parseEnv({
        NODE_ENV: "test",
        PGLITE_DATA_DIR: "memory://",
        MESSAGE_ENCRYPTION_KEYS: `${K2},${K1}`,
        INTERNAL_PORT: "0",
        INTERNAL_API_TOKEN: INTERNAL_TOKEN,
      }),
      { db: t.app.db, clock: t.clock, logDestination: t.logs },
    );
    const internal = rotated.internalHandler;
    if (!internal) throw new Error("no internal listener");
    const operator = (argv: string[]) =>
      runOperatorCli({
        argv,
        client: (actor) =>
          createInternalClient({
            baseUrl: "http://internal.test",
            token: INTERNAL_TOKEN,
            operator: actor,
            fetch: (input, init) =>
              internal(new Request(String(input), init), { remoteAddress: "127.0.0.1" }),
          }),
        defaultActor: "privacy-test",
        cacheTtlMs: rotated.config.apiKeyCacheTtlMs,
      });
    try {
      const run = await operator(["rotate-keys", "--batch-size", "1", "--json"]);
      const counts = JSON.parse(run.stdout.join("\n")) as {
        ok: boolean;
        current_key_id: string;
      } & RotateMessageKeysCounts;
      expect(counts).toMatchObject({ ok: true, current_key_id: "k2" });
      expect(counts.rotated).toBeGreaterThanOrEqual(created.length);
      // Only rows that cannot be decrypted (the swapped ones, unless purged by now) stay behind.
      expect(counts.remaining).toBe(counts.failed);
      expect(run.exitCode).toBe(counts.failed > 0 ? 1 : 0);
      // The rotation is audited with its counts and key id, never key material.
      const audit = await t.app.db.prisma.auditEntry.findFirstOrThrow({
        where: { action: "message_keys.rotated" },
        orderBy: { createdAt: "asc" },
      });
      expect(audit).toMatchObject({ actor: "privacy-test", projectId: null });
      expect(audit.details).toMatchObject({ current_key_id: "k2", rotated: counts.rotated });
      expect(JSON.stringify(audit.details)).not.toContain(K2.split(":")[1] ?? "");
      const again = await operator(["rotate-keys"]);
      expect(again.stdout.join("\n")).toMatch(/^Re-encrypted 0 message\(s\) under key k2\./);
      expect((await operator(["rotate-keys", "--batch-size", "0"])).exitCode).toBe(2);
    } finally {
      await rotated.close();
    }

    const onlyK2 = parseKeyring(K2);
    for (const [index, id] of created.entries()) {
      const row = await rawMessage(id);
      expect(onlyK2.keyIdOf(row.text_ciphertext!)).toBe("k2");
      const send = sends.at(-2 + index)!;
      expect(await onlyK2.decrypt(row.recipient_ciphertext!, id)).toBe(send.to);
      expect(await onlyK2.decrypt(row.text_ciphertext!, id)).toBe(rendered(send));
      await expect(parseKeyring(K1).decrypt(row.text_ciphertext!, id)).rejects.toBeInstanceOf(DecryptError);
    }
    expect(findLeaks(await everyRow(), needles)).toEqual([]);
  });

  it("logged none of it", () => {
    expect(needles.length).toBeGreaterThan(40);
    // Control: the needles are what was sent.
    expect(findLeaks([{ where: "requests", text: JSON.stringify(sends) }], needles).length).toBeGreaterThan(
      40,
    );
    expect(findLeaks([{ where: "logs", text: t.logs.text }], needles)).toEqual([]);
  });
});
