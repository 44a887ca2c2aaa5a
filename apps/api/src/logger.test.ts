// The logger's redaction and error serializer (privacy issue, point 3).
import { describe, expect, it } from "vitest";
import {
  createLogger,
  REDACTED_FIELDS,
  redactValue,
  scrubSecrets,
  scrubText,
  serializeError,
} from "./logger.ts";

const NUMBER = "+995577246813";
const TEST_KEY = "sk_test_Qm9vZ2llV29vZ2llQm9vZ2llV29vZ2llQm9vZ2ll123";
const LIVE_KEY = "sk_live_TGl2ZUtleUxpdmVLZXlMaXZlS2V5TGl2ZUtleUxpdmU";
const CLAIM_TOKEN = "Y2xhaW0tdG9rZW4tY2xhaW0tdG9rZW4tY2xhaW0tdG9r";
const TEXT = "Your verification code is 73519864. Do not share it with anyone.";

function capture(level = "trace") {
  const lines: string[] = [];
  const logger = createLogger({ level, destination: { write: (line: string) => void lines.push(line) } });
  return {
    logger,
    lines,
    entries: () =>
      lines
        .flatMap((l) => l.split("\n").filter(Boolean))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    text: () => lines.join(""),
  };
}

function expectClean(text: string) {
  for (const secret of [NUMBER, NUMBER.slice(1), TEST_KEY, LIVE_KEY, CLAIM_TOKEN, TEXT, "73519864"]) {
    expect(text).not.toContain(secret);
  }
}

describe("field redaction", () => {
  it.each(REDACTED_FIELDS)("censors %s at the top level and nested, in any spelling", (field) => {
    const snake = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    const kebab = snake.replace(/_/g, "-");
    const { logger, entries } = capture();
    logger.info(
      {
        [field]: TEXT,
        nested: { [snake]: NUMBER, deeper: [{ a: { b: { [kebab.toUpperCase()]: TEST_KEY } } }] },
      },
      "m",
    );
    const entry = entries()[0]!;
    expect(entry[field]).toBe("[redacted]");
    const nested = entry.nested as { deeper: Array<{ a: { b: Record<string, unknown> } }> } & Record<
      string,
      unknown
    >;
    expect(nested[snake]).toBe("[redacted]");
    expect(nested.deeper[0]!.a.b[kebab.toUpperCase()]).toBe("[redacted]");
  });

  it("keeps ordinary fields, nulls and the structure", () => {
    const { logger, entries } = capture();
    logger.info(
      { job: "purge", purged: 3, status: 201, route: "/v1/messages", to: null, list: [1, "a"] },
      "round",
    );
    expect(entries()[0]).toMatchObject({
      job: "purge",
      purged: 3,
      status: 201,
      route: "/v1/messages",
      to: null,
      list: [1, "a"],
      msg: "round",
    });
  });

  it("censors objects under a sensitive name whole, and writes bytes as a length", () => {
    const { logger, text, entries } = capture();
    logger.info(
      { variables: { code: "73519864" }, blob: new Uint8Array([1, 2, 3]), buf: Buffer.from(TEXT) },
      "m",
    );
    expectClean(text());
    expect(entries()[0]).toMatchObject({
      variables: "[redacted]",
      blob: "[3 bytes]",
      buf: `[${Buffer.byteLength(TEXT)} bytes]`,
    });
  });

  it("copes with cycles and depth", () => {
    const cyclic: Record<string, unknown> = { name: "a" };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = { to: NUMBER };
    for (let i = 0; i < 20; i++) deep = { inner: deep };
    const { logger, text } = capture();
    logger.info({ cyclic, deep }, "m");
    expect(text()).toContain("[circular]");
    expectClean(text());
  });

  it("redacts child bindings too", () => {
    const { logger, text } = capture();
    logger.child({ request_id: "req_1", apiKey: TEST_KEY }).info({}, "m");
    expect(text()).toContain("req_1");
    expectClean(text());
  });

  it("does not change the caller's object", () => {
    const object = { to: NUMBER, nested: { text: TEXT } };
    capture().logger.info(object, "m");
    expect(object).toEqual({ to: NUMBER, nested: { text: TEXT } });
  });
});

describe("free text", () => {
  it("scrubs keys, bearer tokens, secret query parameters, claim links, URL credentials and numbers", () => {
    const input =
      `auth Bearer ${TEST_KEY} and ${LIVE_KEY}; GET https://api.ubill.dev/v1/sms/report/4817263?key=ubill-SECRET-1&x=1 ` +
      `callback /auth/google/callback?state=s3cr3t&code=oauth-code-9; claim http://h/claim/${CLAIM_TOKEN} ` +
      `db postgresql://sms:hunter2@db:5432/sms; to ${NUMBER} or ${NUMBER.slice(1)}`;
    const scrubbed = scrubSecrets(input);
    expectClean(scrubbed);
    for (const secret of ["ubill-SECRET-1", "s3cr3t", "oauth-code-9", "hunter2"])
      expect(scrubbed).not.toContain(secret);
    expect(scrubbed).toContain("Bearer [redacted]");
    expect(scrubbed).toContain("sk_live_[redacted]");
    expect(scrubbed).toContain("/claim/[redacted]");
    expect(scrubbed).toContain("postgresql://sms:[redacted]@db:5432/sms");
  });

  it("scrubs each kind of secret when it is the only one in the text", () => {
    const alone = [
      `key ${TEST_KEY}.`,
      `key ${LIVE_KEY}`,
      "Authorization: BEARER abc.def",
      "GET /v1/sms/report/1?KEY=ubill-SECRET-1",
      "callback?x=1&code=oauth-code-9",
      `link /claim/${CLAIM_TOKEN}`,
      "db postgres://sms:hunter2@db/sms",
      `to ${NUMBER}`,
      `to ${NUMBER.slice(1)}`,
    ];
    for (const text of alone) {
      const scrubbed = scrubSecrets(text);
      expect(scrubbed).not.toBe(text);
      expectClean(scrubbed);
      for (const secret of ["abc.def", "ubill-SECRET-1", "oauth-code-9", "hunter2"])
        expect(scrubbed).not.toContain(secret);
    }
  });

  it("scrubs the message argument and the finished line", () => {
    const { logger, text } = capture();
    logger.info(`sending to ${NUMBER} with ${TEST_KEY}`);
    logger.warn({ job: "x" }, `claim /claim/${CLAIM_TOKEN}`);
    logger.info({ note: `nested free text ${NUMBER} ${LIVE_KEY}` }, "m");
    expectClean(text());
    for (const line of text().split("\n").filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  });

  it("keeps the line valid JSON when a secret sits next to quotes and backslashes", () => {
    const { logger, lines } = capture();
    logger.info({ note: `"?key=abc\\"def" \\${TEST_KEY}\\ "${NUMBER}"` }, "m");
    const entry = JSON.parse(lines[0]!) as { note: string };
    expect(entry.note).not.toContain("abc");
    expectClean(lines[0]!);
  });
});

/** A fake driver error in the style of pg / Prisma: quotes the parameter it fails on. */
function fakeDriverError(): Error {
  const error = new Error(
    `\nInvalid \`prisma.message.create()\` invocation:\n\ninvalid input syntax for type bytea: "${TEXT}"\n` +
      `Key (recipient)=(${NUMBER}) already exists; sent with ${TEST_KEY} to ` +
      `https://api.ubill.dev/v1/sms/send?key=ubill-SECRET-1 and '${NUMBER.slice(1)}'`,
  ) as Error & { code: string; detail: string; meta: unknown };
  error.name = "PrismaClientKnownRequestError";
  error.code = "P2010";
  error.detail = `Key (to)=(${NUMBER}) already exists.`;
  error.meta = { driverAdapterError: { cause: { originalMessage: TEXT } } };
  error.cause = Object.assign(new Error(`duplicate key value violates unique constraint: "${NUMBER}"`), {
    code: "23505",
  });
  return error;
}

describe("serializeError", () => {
  it("keeps the type, code and a scrubbed message; drops detail and meta", () => {
    const serialized = serializeError(fakeDriverError());
    const json = JSON.stringify(serialized);
    expectClean(json);
    expect(json).not.toContain("ubill-SECRET-1");
    expect(serialized).toMatchObject({ type: "PrismaClientKnownRequestError", code: "P2010" });
    expect(serialized.message).toContain("invalid input syntax for type bytea");
    expect(serialized).not.toHaveProperty("detail");
    expect(serialized).not.toHaveProperty("meta");
    expect(serialized.cause).toMatchObject({ code: "23505" });
  });

  it("keeps only stack frames (a multi-line message is not repeated from the stack)", () => {
    const serialized = serializeError(fakeDriverError());
    const stack = String(serialized.stack);
    expect(stack).toMatch(/^\s+at /);
    expect(stack).not.toContain("invalid input syntax");
  });

  it("handles strings, non-errors, aggregate errors and deep causes", () => {
    expect(serializeError(`failed for ${NUMBER}`)).toEqual({
      type: "string",
      message: "failed for [number]",
    });
    expect(serializeError(null)).toEqual({ type: "null" });
    expect(serializeError({ message: TEXT })).toEqual({ type: "object" });
    const aggregate = new AggregateError([new Error(`to "${NUMBER}"`)], "all failed");
    expectClean(JSON.stringify(serializeError(aggregate)));
    let chain: Error = new Error(TEST_KEY);
    for (let i = 0; i < 10; i++) chain = new Error(`level ${i}`, { cause: chain });
    expectClean(JSON.stringify(serializeError(chain)));
  });

  it("is what the logger writes for an error under any field name, or as the first argument", () => {
    const { logger, text, entries } = capture();
    logger.error({ err: fakeDriverError() }, "procedure failed");
    logger.error({ details: { inner: fakeDriverError() } }, "nested");
    logger.error(fakeDriverError());
    logger.warn({ error: `connection closed: "${NUMBER}"` }, "db");
    expectClean(text());
    expect(text()).not.toContain("ubill-SECRET-1");
    const [first, nested, bare, stringError] = entries() as [
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect(first.err).toMatchObject({ type: "PrismaClientKnownRequestError", code: "P2010" });
    expect((nested.details as { inner: unknown }).inner).toMatchObject({
      type: "PrismaClientKnownRequestError",
    });
    expect(bare.err).toMatchObject({ code: "P2010" });
    expect(bare.msg).toContain("invalid input syntax");
    expect(stringError.error).toBe("connection closed: [value]");
  });

  it("scrubText removes quoted values, long digit runs and URL paths", () => {
    expect(
      scrubText(`value "${TEXT}" for 995577246813 at https://h.example/v1/sms/report/4817263?key=x`),
    ).toBe("value [value] for [number] at https://h.example/[path]");
  });
});

describe("redactValue", () => {
  it("returns primitives unchanged", () => {
    expect(redactValue(5)).toBe(5);
    expect(redactValue("plain")).toBe("plain");
    expect(redactValue(undefined)).toBeUndefined();
  });

  it("copies an object met twice side by side (not a cycle), and a cycle as [circular]", () => {
    const shared = { note: "n", token: "t" };
    expect(redactValue({ a: shared, b: [shared, shared] })).toEqual({
      a: { note: "n", token: "[redacted]" },
      b: [
        { note: "n", token: "[redacted]" },
        { note: "n", token: "[redacted]" },
      ],
    });
    const cyclic: Record<string, unknown> = { name: "a" };
    cyclic.list = [cyclic];
    expect(redactValue(cyclic)).toEqual({ name: "a", list: ["[circular]"] });
  });

  it("leaves nothing behind when a getter throws: the next call sees no false cycle", () => {
    const inner = { name: "inner" };
    const throwing = {
      inner,
      get broken(): never {
        throw new Error("getter");
      },
    };
    expect(() => redactValue(throwing)).toThrow("getter");
    expect(redactValue({ inner, again: { inner } })).toEqual({ inner: { name: "inner" }, again: { inner: { name: "inner" } } });
    expect(redactValue(inner)).toEqual({ name: "inner" });
  });
});
