// The check path's work does not depend on the code: a right and a wrong code
// make the same calls (one lock, one keyed-hash comparison, one write), and
// an unknown id hashes and compares too. Against an in-memory store and the
// real keyring, recording every call.
import { generateKeySpec, type Keyring, parseKeyring } from "@sms/crypto";
import { describe, expect, it } from "vitest";
import { codeHashInput, type VerificationState } from "../model/verification.ts";
import type { LockedVerification } from "../store/index.ts";
import { checkVerification } from "./check-verification.ts";

const NOW = new Date("2026-11-22T10:00:00Z");
const ID = "vrf_01m81b5h80a4k2x9wq7zt3nd6e";

async function setup(code: string) {
  const calls: string[] = [];
  const real = parseKeyring(generateKeySpec("t1"));
  const keyring: Keyring = {
    ...real,
    async verifyFingerprint(data, fingerprint) {
      calls.push("keyring.verifyFingerprint");
      return real.verifyFingerprint(data, fingerprint);
    },
  };
  let row: LockedVerification | null = {
    id: ID,
    projectId: "prj_1",
    mode: "test",
    messageId: "msg_1",
    recipientMasked: "+9955••••••56",
    template: "verification_code",
    locale: "ka",
    status: "pending",
    attemptsRemaining: 5,
    attemptsAtStart: 5,
    expiresAt: new Date(NOW.getTime() + 600_000),
    approvedAt: null,
    createdAt: NOW,
    updatedAt: NOW,
    codeHash: await real.fingerprint(codeHashInput(ID, code)),
  };
  const verifications = {
    async lockForCheck(id: string) {
      calls.push("lockForCheck");
      return row && row.id === id ? row : null;
    },
    async recordCheck(change: { status: VerificationState["status"]; attemptsRemaining: number }) {
      calls.push("recordCheck");
      if (!row) throw new Error("no row");
      row = { ...row, status: change.status, attemptsRemaining: change.attemptsRemaining };
      return row;
    },
  };
  const store = {
    async transaction<T>(work: (tx: { verifications: typeof verifications }) => Promise<T>) {
      calls.push("begin");
      const result = await work({ verifications });
      calls.push("commit");
      return result;
    },
  };
  const counters = new Map<string, number>();
  const limits = {
    async consume(window: { bucket: string }, cost: number, limit: number) {
      const used = (counters.get(window.bucket) ?? 0) + cost;
      if (used > limit) return null;
      counters.set(window.bucket, used);
      return used;
    },
    async read(bucket: string) {
      return counters.get(bucket) ?? 0;
    },
    async release(bucket: string, _start: Date, amount: number) {
      counters.set(bucket, (counters.get(bucket) ?? 0) - amount);
    },
  };
  const deps = {
    store: { ...store, limits },
    keyring,
    clock: { now: () => NOW },
    config: { checksPerMinute: { project: 1000, address: 1000 } },
  };
  return { calls, deps, counters };
}

describe("checkVerification's work", () => {
  it("is the same for a right and a wrong code", async () => {
    const right = await setup("482913");
    const wrong = await setup("482913");
    const approved = await checkVerification(right.deps, {
      projectId: "prj_1",
      address: "192.0.2.1",
      verificationId: ID,
      code: "482913",
    });
    const counted = await checkVerification(wrong.deps, {
      projectId: "prj_1",
      address: "192.0.2.1",
      verificationId: ID,
      code: "482914",
    });
    expect(approved).toMatchObject({ ok: true, transition: "approved" });
    expect(counted).toMatchObject({ ok: true, transition: "attempt" });
    expect(right.calls).toEqual([
      "begin",
      "lockForCheck",
      "keyring.verifyFingerprint",
      "recordCheck",
      "commit",
    ]);
    expect(wrong.calls).toEqual(right.calls);
  });

  it("hashes and compares for an unknown or malformed id too", async () => {
    for (const verificationId of ["vrf_00000000000000000000000000", "not-an-id"]) {
      const { calls, deps } = await setup("482913");
      const result = await checkVerification(deps, {
        projectId: "prj_1",
        address: "192.0.2.1",
        verificationId,
        code: "482913",
      });
      expect(result).toEqual({ ok: false, code: "verification_not_found" });
      expect(calls).toEqual(["begin", "lockForCheck", "keyring.verifyFingerprint", "commit"]);
    }
  });

  it("never matches a code against another verification's hash (the id is part of what is hashed)", async () => {
    const { deps } = await setup("482913");
    const real = parseKeyring(generateKeySpec("t2"));
    expect(await real.fingerprint(codeHashInput(ID, "1"))).not.toBe(
      await real.fingerprint(codeHashInput("vrf_other", "1")),
    );
    const result = await checkVerification(deps, {
      projectId: "prj_1",
      address: "192.0.2.1",
      verificationId: ID,
      code: "482913",
    });
    expect(result).toMatchObject({ ok: true, transition: "approved" });
  });

  it("once approved, answers the same for the right code and a wrong one, and writes nothing (issue 53, M1)", async () => {
    const { calls, deps } = await setup("482913");
    const input = { projectId: "prj_1", address: "192.0.2.1", verificationId: ID };
    expect(await checkVerification(deps, { ...input, code: "482913" })).toMatchObject({ ok: true });
    calls.length = 0;
    const right = await checkVerification(deps, { ...input, code: "482913" });
    const rightCalls = calls.splice(0);
    const wrong = await checkVerification(deps, { ...input, code: "000000" });
    const refusal = { ok: false, code: "verification_not_pending", status: "approved", expiredNow: false };
    expect(right).toEqual(refusal);
    expect(wrong).toEqual(refusal);
    expect(rightCalls).toEqual(["begin", "lockForCheck", "keyring.verifyFingerprint", "commit"]);
    expect(calls).toEqual(rightCalls);
  });

  it("counts checks per project and per address; past either, rate_limited before any lookup, counted by neither", async () => {
    const { calls, deps, counters } = await setup("482913");
    deps.config.checksPerMinute = { project: 3, address: 2 };
    const check = (address: string) =>
      checkVerification(deps, { projectId: "prj_1", address, verificationId: ID, code: "111111" });
    expect(await check("192.0.2.1")).toMatchObject({ ok: true });
    expect(await check("192.0.2.1")).toMatchObject({ ok: true });
    calls.length = 0;
    // The address's two are used up; the project's counter is given back.
    expect(await check("192.0.2.1")).toMatchObject({
      ok: false,
      code: "rate_limited",
      subject: "verification_checks",
      limit: { limit: 2, remaining: 0 },
    });
    expect(calls).toEqual([]);
    expect(counters.get("verification_checks:prj_1:minute")).toBe(2);
    // Another address: the project's third, then the project is used up.
    expect(await check("192.0.2.2")).toMatchObject({ ok: true });
    expect(await check("192.0.2.3")).toMatchObject({ ok: false, code: "rate_limited", limit: { limit: 3 } });
    expect(counters.get("verification_checks:addr:192.0.2.3:minute") ?? 0).toBe(0);
  });
});
