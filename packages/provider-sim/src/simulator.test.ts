import type { Clock, SubmitRequest } from "@sms/domain";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createSimulatorProvider, DEFAULT_DELIVERY_DELAY_MS, SIMULATOR_NUMBERS } from "./index.ts";

const START = new Date("2025-03-01T10:00:00.000Z");

/** A clock the test moves by hand. */
function fakeClock(start: Date = START): Clock & { advance(ms: number): void; set(date: Date): void } {
  let nowMs = start.getTime();
  return {
    now: () => new Date(nowMs),
    advance(ms) {
      nowMs += ms;
    },
    set(date) {
      nowMs = date.getTime();
    },
  };
}

function request(to: string, messageId = "msg_test_1"): SubmitRequest {
  return { messageId, to, text: "Your verification code is 1234.", sender: { name: "SMSGE", brandId: null } };
}

async function acceptedRef(
  provider: ReturnType<typeof createSimulatorProvider>,
  to: string,
): Promise<string> {
  const outcome = await provider.submit(request(to));
  if (outcome.kind !== "accepted") throw new Error(`expected accepted, got ${outcome.kind}`);
  return outcome.providerRef;
}

describe("simulator submit", () => {
  it("is named simulator", () => {
    expect(createSimulatorProvider({ clock: fakeClock() }).name).toBe("simulator");
  });

  it("rejects +995500000001 with provider_rejected", async () => {
    const outcome = await createSimulatorProvider({ clock: fakeClock() }).submit(request("+995500000001"));
    expect(outcome).toMatchObject({ kind: "rejected", code: "provider_rejected" });
    expect(SIMULATOR_NUMBERS.rejected).toBe("+995500000001");
  });

  it("reports +995500000002 as unreachable", async () => {
    const outcome = await createSimulatorProvider({ clock: fakeClock() }).submit(request("+995500000002"));
    expect(outcome.kind).toBe("unreachable");
    expect(SIMULATOR_NUMBERS.unreachable).toBe("+995500000002");
  });

  it("reports +995500000003 as indeterminate", async () => {
    const outcome = await createSimulatorProvider({ clock: fakeClock() }).submit(request("+995500000003"));
    expect(outcome.kind).toBe("indeterminate");
    expect(SIMULATOR_NUMBERS.indeterminate).toBe("+995500000003");
  });

  it("accepts +995500000004 and later reports it undeliverable", async () => {
    const clock = fakeClock();
    const provider = createSimulatorProvider({ clock });
    expect(SIMULATOR_NUMBERS.undeliverable).toBe("+995500000004");
    const providerRef = await acceptedRef(provider, SIMULATOR_NUMBERS.undeliverable);
    const query = { providerRef, to: SIMULATOR_NUMBERS.undeliverable, submittedAt: START };
    expect(await provider.checkStatus(query)).toEqual({ kind: "pending" });
    clock.advance(DEFAULT_DELIVERY_DELAY_MS);
    expect(await provider.checkStatus(query)).toMatchObject({ kind: "undeliverable" });
  });

  it("accepts an ordinary number and later reports it delivered", async () => {
    const clock = fakeClock();
    const provider = createSimulatorProvider({ clock });
    const providerRef = await acceptedRef(provider, "+995599123456");
    const query = { providerRef, to: "+995599123456", submittedAt: START };
    expect(await provider.checkStatus(query)).toEqual({ kind: "pending" });
    clock.advance(DEFAULT_DELIVERY_DELAY_MS);
    expect(await provider.checkStatus(query)).toEqual({ kind: "delivered" });
  });

  it("rejects a recipient that is not +9955 and eight digits as invalid_recipient", async () => {
    const provider = createSimulatorProvider({ clock: fakeClock() });
    for (const to of ["+995400000000", "995599123456", "+99559912345", "+9955991234567", ""]) {
      expect(await provider.submit(request(to))).toMatchObject({
        kind: "rejected",
        code: "invalid_recipient",
      });
    }
  });

  it("issues an opaque reference that never contains the recipient", async () => {
    const provider = createSimulatorProvider({ clock: fakeClock() });
    const providerRef = await acceptedRef(provider, "+995599123456");
    expect(providerRef).toMatch(/^sim_[0-9a-f]{20}$/);
    expect(providerRef).not.toContain("599123456");
  });

  it("gives different submissions different references", async () => {
    const clock = fakeClock();
    const provider = createSimulatorProvider({ clock });
    const first = await provider.submit(request("+995599123456", "msg_a"));
    const second = await provider.submit(request("+995599123456", "msg_b"));
    clock.advance(1);
    const third = await provider.submit(request("+995599123456", "msg_a"));
    const refs = [first, second, third].map((outcome) =>
      outcome.kind === "accepted" ? outcome.providerRef : "",
    );
    expect(new Set(refs).size).toBe(3);
  });

  it("keeps reasons free of the recipient", async () => {
    const provider = createSimulatorProvider({ clock: fakeClock() });
    for (const to of Object.values(SIMULATOR_NUMBERS)) {
      const outcome = await provider.submit(request(to));
      if ("reason" in outcome) expect(outcome.reason).not.toContain(to.slice(4));
    }
  });
});

describe("simulator status delay", () => {
  it("stays pending until exactly deliveryDelayMs has passed", async () => {
    const clock = fakeClock();
    const provider = createSimulatorProvider({ clock, deliveryDelayMs: 2000 });
    const providerRef = await acceptedRef(provider, "+995555000111");
    const query = { providerRef, to: "+995555000111", submittedAt: START };

    clock.set(new Date(START.getTime() + 1999));
    expect(await provider.checkStatus(query)).toEqual({ kind: "pending" });
    clock.set(new Date(START.getTime() + 2000));
    expect(await provider.checkStatus(query)).toEqual({ kind: "delivered" });
    clock.set(new Date(START.getTime() + 60_000));
    expect(await provider.checkStatus(query)).toEqual({ kind: "delivered" });
  });

  it("defaults to a 5000 ms delay", async () => {
    const clock = fakeClock();
    const provider = createSimulatorProvider({ clock });
    const providerRef = await acceptedRef(provider, "+995555000111");
    const query = { providerRef, to: "+995555000111", submittedAt: START };
    clock.advance(4999);
    expect(await provider.checkStatus(query)).toEqual({ kind: "pending" });
    clock.advance(1);
    expect(await provider.checkStatus(query)).toEqual({ kind: "delivered" });
  });

  it("measures the delay from the submittedAt it is given", async () => {
    const clock = fakeClock();
    const provider = createSimulatorProvider({ clock, deliveryDelayMs: 1000 });
    const providerRef = await acceptedRef(provider, "+995555000111");
    clock.advance(1500);
    const later = new Date(START.getTime() + 1000);
    expect(await provider.checkStatus({ providerRef, to: "+995555000111", submittedAt: later })).toEqual({
      kind: "pending",
    });
  });

  it("settles at once with a zero delay", async () => {
    const clock = fakeClock();
    const provider = createSimulatorProvider({ clock, deliveryDelayMs: 0 });
    const providerRef = await acceptedRef(provider, "+995555000111");
    expect(await provider.checkStatus({ providerRef, to: "+995555000111", submittedAt: START })).toEqual({
      kind: "delivered",
    });
  });

  it("refuses a negative or non-finite delay", () => {
    expect(() => createSimulatorProvider({ clock: fakeClock(), deliveryDelayMs: -1 })).toThrow(RangeError);
    expect(() => createSimulatorProvider({ clock: fakeClock(), deliveryDelayMs: Number.NaN })).toThrow(
      RangeError,
    );
  });
});

describe("simulator references", () => {
  it("lets a fresh instance check another instance's reference (stateless)", async () => {
    const clock = fakeClock();
    const issuer = createSimulatorProvider({ clock });
    const delivered = await acceptedRef(issuer, "+995577000000");
    const undeliverable = await acceptedRef(issuer, SIMULATOR_NUMBERS.undeliverable);

    clock.advance(DEFAULT_DELIVERY_DELAY_MS);
    const other = createSimulatorProvider({ clock: fakeClock(clock.now()) });
    expect(
      await other.checkStatus({ providerRef: delivered, to: "+995577000000", submittedAt: START }),
    ).toEqual({
      kind: "delivered",
    });
    expect(
      await other.checkStatus({
        providerRef: undeliverable,
        to: SIMULATOR_NUMBERS.undeliverable,
        submittedAt: START,
      }),
    ).toMatchObject({ kind: "undeliverable" });
  });

  it("answers error for a reference it did not issue", async () => {
    const clock = fakeClock();
    const provider = createSimulatorProvider({ clock });
    const good = await acceptedRef(provider, "+995577000000");
    clock.advance(DEFAULT_DELIVERY_DELAY_MS);
    // `good` plans delivery (tag offset 0); offset 2 is no planned outcome.
    const tagPlusTwo = ((Number.parseInt(good.slice(-4), 16) + 2) & 0xffff).toString(16).padStart(4, "0");
    const flippedBody = `sim_${good[4] === "a" ? "b" : "a"}${good.slice(5)}`;
    const forged = [
      "",
      "117345",
      "sim_",
      `${good}0`,
      good.toUpperCase(),
      `${good.slice(0, -4)}${tagPlusTwo}`,
      flippedBody,
      `ubill_${good.slice(4)}`,
    ];
    for (const providerRef of forged) {
      expect(
        await provider.checkStatus({ providerRef, to: "+995577000000", submittedAt: START }),
      ).toMatchObject({
        kind: "error",
      });
    }
  });

  it("answers error for an invalid submittedAt", async () => {
    const provider = createSimulatorProvider({ clock: fakeClock() });
    const providerRef = await acceptedRef(provider, "+995577000000");
    expect(
      await provider.checkStatus({ providerRef, to: "+995577000000", submittedAt: new Date(Number.NaN) }),
    ).toMatchObject({ kind: "error" });
  });
});

describe("simulator properties", () => {
  const reserved = new Set<string>(Object.values(SIMULATOR_NUMBERS));
  const ordinaryNumber = fc
    .array(fc.integer({ min: 0, max: 9 }), { minLength: 8, maxLength: 8 })
    .map((digits) => `+9955${digits.join("")}`)
    .filter((to) => !reserved.has(to));

  it("accepts any ordinary valid number, then delivers it after the delay", async () => {
    await fc.assert(
      fc.asyncProperty(
        ordinaryNumber,
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.date({
          min: new Date("2020-01-01T00:00:00Z"),
          max: new Date("2040-01-01T00:00:00Z"),
          noInvalidDate: true,
        }),
        async (to, messageId, deliveryDelayMs, submittedAt) => {
          const clock = fakeClock(submittedAt);
          const provider = createSimulatorProvider({ clock, deliveryDelayMs });
          const outcome = await provider.submit(request(to, messageId));
          expect(outcome.kind).toBe("accepted");
          if (outcome.kind !== "accepted") return;
          expect(outcome.providerRef).not.toContain(to.slice(1));
          const query = { providerRef: outcome.providerRef, to, submittedAt };
          if (deliveryDelayMs > 0) {
            clock.advance(deliveryDelayMs - 1);
            expect(await provider.checkStatus(query)).toEqual({ kind: "pending" });
            clock.advance(1);
          }
          const fresh = createSimulatorProvider({ clock, deliveryDelayMs });
          expect(await fresh.checkStatus(query)).toEqual({ kind: "delivered" });
        },
      ),
    );
  });
});
