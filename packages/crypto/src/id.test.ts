import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ID_BODY_LENGTH, ID_PREFIXES, type IdPrefix, idTimestamp, isId, newId } from "./index.ts";

const CROCKFORD_BODY = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/;
const MAX_TIME = 2 ** 48 - 1;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("newId", () => {
  it.each(ID_PREFIXES)("makes a fixed-length, URL-safe %s id", (prefix) => {
    const id = newId(prefix);
    expect(id.startsWith(`${prefix}_`)).toBe(true);
    const body = id.slice(prefix.length + 1);
    expect(body).toHaveLength(ID_BODY_LENGTH);
    expect(body).toMatch(CROCKFORD_BODY);
    expect(encodeURIComponent(id)).toBe(id);
    expect(isId(prefix, id)).toBe(true);
  });

  it("encodes the timestamp in the first ten characters", () => {
    expect(newId("msg", 0).slice(4, 14)).toBe("0000000000");
    expect(newId("msg", MAX_TIME).slice(4, 14)).toBe("7zzzzzzzzz");
    // 1,700,000,000,000 ms = 0x18BCFE56800, in base32: 01hf7yat00
    expect(newId("msg", 1_700_000_000_000).slice(4, 14)).toBe("01hf7yat00");
  });

  it("round-trips the timestamp", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_TIME }), fc.constantFrom(...ID_PREFIXES), (t, prefix) => {
        expect(idTimestamp(newId(prefix, t))).toBe(t);
      }),
    );
  });

  it("encodes each timestamp right when calls alternate between two (the last one's characters are reused only for the same millisecond)", () => {
    const times = [1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_000, 0, 0, MAX_TIME, 1_700_000_000_001];
    for (let round = 0; round < 3; round++) {
      for (const t of times) expect(idTimestamp(newId("msg", t))).toBe(t);
    }
  });

  it("never hands out the same random bytes twice across the pool's refills (1 MB of ids, one millisecond)", () => {
    const bodies = new Set<string>();
    for (let i = 0; i < 100_000; i++) bodies.add(newId("msg", 1_700_000_000_000).slice(14));
    expect(bodies.size).toBe(100_000);
  });

  it("uses Date.now() by default", () => {
    vi.spyOn(Date, "now").mockReturnValue(1_700_000_000_123);
    expect(idTimestamp(newId("req"))).toBe(1_700_000_000_123);
  });

  it("is unique over 100k ids", () => {
    const ids = new Set<string>();
    for (let i = 0; i < 100_000; i++) ids.add(newId("msg"));
    expect(ids.size).toBe(100_000);
  });

  it("has 80 random bits: every character position varies", () => {
    const ids = Array.from({ length: 2000 }, () => newId("msg", 1_700_000_000_000).slice(14));
    for (let position = 0; position < 16; position++) {
      const seen = new Set(ids.map((body) => body[position]));
      // With 2,000 draws each of the 32 characters appears with overwhelming probability.
      expect(seen.size).toBe(32);
    }
  });

  it("sorts by creation time as plain strings across milliseconds", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_TIME - 1 }),
        fc.integer({ min: 1, max: MAX_TIME }),
        (t, delta) => {
          const later = Math.min(t + delta, MAX_TIME);
          expect(newId("msg", t) < newId("msg", later)).toBe(true);
        },
      ),
    );
  });

  it("sorts ids made a millisecond or more apart with the real clock", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push(newId("msg"));
      const start = Date.now();
      while (Date.now() === start) await new Promise((resolve) => setTimeout(resolve, 0));
    }
    expect([...ids].sort()).toEqual(ids);
  });

  it("rejects an unknown prefix and out-of-range timestamps", () => {
    expect(() => newId("usr" as IdPrefix)).toThrow(TypeError);
    expect(() => newId("msg", -1)).toThrow(RangeError);
    expect(() => newId("msg", 2 ** 48)).toThrow(RangeError);
    expect(() => newId("msg", 1.5)).toThrow(RangeError);
    expect(() => newId("msg", Number.NaN)).toThrow(RangeError);
  });
});

describe("isId", () => {
  const good = "msg_01hf7yat00abcdefghjkmnpqrs";

  it("accepts the documented shape", () => {
    expect(isId("msg", good)).toBe(true);
  });

  it.each([
    ["another prefix", "prj_01hf7yat00abcdefghjkmnpqrs"],
    ["uppercase", "msg_01HF7YAT00ABCDEFGHJKMNPQRS"],
    ["uppercase prefix", "MSG_01hf7yat00abcdefghjkmnpqrs"],
    ["too short", "msg_01hf7yat00abcdefghjkmnpqr"],
    ["too long", "msg_01hf7yat00abcdefghjkmnpqrst"],
    ["letter i (not Crockford)", "msg_01hf7yat00abcdefghjkmnpqri"],
    ["letter l", "msg_01hf7yat00abcdefghjkmnpqrl"],
    ["letter o", "msg_01hf7yat00abcdefghjkmnpqro"],
    ["letter u", "msg_01hf7yat00abcdefghjkmnpqru"],
    ["timestamp overflow (first char > 7)", "msg_81hf7yat00abcdefghjkmnpqrs"],
    ["missing underscore", "msg01hf7yat00abcdefghjkmnpqrs"],
    ["dash instead of underscore", "msg-01hf7yat00abcdefghjkmnpqrs"],
    ["trailing newline", `${good}\n`],
    ["leading space", ` ${good}`],
    ["empty", ""],
    ["bare prefix", "msg_"],
  ])("rejects %s", (_, value) => {
    expect(isId("msg", value)).toBe(false);
  });

  it("rejects non-strings and unknown prefixes", () => {
    expect(isId("msg", undefined)).toBe(false);
    expect(isId("msg", null)).toBe(false);
    expect(isId("msg", 42)).toBe(false);
    expect(isId("msg", { toString: () => good })).toBe(false);
    expect(isId("usr" as IdPrefix, "usr_01hf7yat00abcdefghjkmnpqrs")).toBe(false);
  });

  it("never accepts arbitrary strings that are not ids", () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        expect(isId("msg", value)).toBe(/^msg_[0-7][0-9a-hjkmnp-tv-z]{25}$/.test(value));
      }),
    );
  });

  it("idTimestamp returns null for malformed ids", () => {
    expect(idTimestamp("msg_nope")).toBeNull();
    expect(idTimestamp("nope")).toBeNull();
    expect(idTimestamp("usr_01hf7yat00abcdefghjkmnpqrs")).toBeNull();
    expect(idTimestamp(good)).toBe(1_700_000_000_000);
  });
});
