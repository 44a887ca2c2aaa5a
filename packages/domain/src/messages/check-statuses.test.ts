// The status check's round without a database: batches, bounded provider
// concurrency, one settle per batch, decrypting only for providers that report
// per number, and the deadline. (The SQL and two workers at once are proven by
// the integration suites.)
import { generateKeySpec, type Keyring, parseKeyring } from "@sms/crypto";
import { describe, expect, it } from "vitest";
import type { SmsProvider, StatusQuery, StatusReport } from "../provider.ts";
import type { DueMessage } from "../store/index.ts";
import { type CheckStatusesDeps, checkMessageStatuses } from "./check-statuses.ts";

const NOW = new Date("2026-11-22T10:00:00Z");
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

function due(
  count: number,
  provider: "simulator" | "ubill",
  submittedAt = new Date(NOW.getTime() - 60_000),
): DueMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `msg_${String(i).padStart(26, "0")}`,
    provider,
    providerRef: `ref-${i}`,
    recipientCiphertext: new Uint8Array([1, 2, 3]),
    submittedAt,
    projectId: "prj_unit",
    creditsReserved: provider === "ubill" ? 1 : 0,
  }));
}

function setup(options: {
  messages: DueMessage[];
  report: (query: StatusQuery) => StatusReport;
  reportsByRecipient?: boolean;
  batchSize?: number;
  concurrency?: number;
  deadlineMs?: number;
  callTimeoutMs?: number;
}) {
  const queue = [...options.messages];
  const settled: Array<Array<{ messageId: string; status: string }>> = [];
  const refunds: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const decrypted: string[] = [];
  let decryptFails = false;
  const keyring = {
    ...parseKeyring(generateKeySpec("unit")),
    decrypt: async (_blob: Uint8Array, messageId: string) => {
      if (decryptFails) throw new Error("authentication failed");
      decrypted.push(messageId);
      return "+995555123456";
    },
  } as Keyring;
  const provider: SmsProvider = {
    name: options.messages[0]?.provider === "ubill" ? "ubill" : "simulator",
    reportsByRecipient: options.reportsByRecipient ?? false,
    submit: async () => ({ kind: "unreachable", reason: "unused" }),
    async checkStatus(query) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight--;
      return options.report(query);
    },
  };
  const claims: Date[] = [];
  const rescheduled: Array<{ ids: string[]; at: Date }> = [];
  /** Up to `batchSize` of the queue's messages that `which` takes, taken off the queue. */
  const take = (batchSize: number, which: (message: DueMessage) => boolean) => {
    const taken = queue.filter(which).slice(0, batchSize);
    for (const message of taken) queue.splice(queue.indexOf(message), 1);
    return taken;
  };
  const locks: number[] = [];
  const claimedIds: string[][] = [];
  let transactions = 0;
  const messages = {
    lockDue: async ({ batchSize }: { batchSize: number }) => {
      const taken = take(batchSize, () => true);
      locks.push(taken.length);
      return taken;
    },
    claimChecks: async (ids: string[], nextCheckAt: Date) => {
      if (ids.length > 0) {
        claims.push(nextCheckAt);
        claimedIds.push(ids);
      }
      return ids.length;
    },
    rescheduleChecks: async (ids: string[], at: Date) => {
      if (ids.length > 0) rescheduled.push({ ids, at });
      return ids.length;
    },
    settleMany: async (changes: Array<{ messageId: string; status: string }>) => {
      settled.push(changes.map(({ messageId, status }) => ({ messageId, status })));
      return new Set(changes.map((change) => change.messageId));
    },
  };
  const deps = {
    store: {
      messages,
      transaction: async (work: (tx: unknown) => Promise<unknown>) => {
        transactions++;
        return work({
          messages,
          ledger: { refund: async ({ messageId }: { messageId: string }) => refunds.push(messageId) },
        });
      },
    },
    keyring,
    clock: { now: () => NOW },
    logger: silent,
    providers: { test: provider, live: provider },
    config: {
      intervalMs: 20_000,
      batchSize: options.batchSize ?? 10,
      concurrency: options.concurrency ?? 4,
      deadlineMs: options.deadlineMs ?? 72 * 3_600_000,
      callTimeoutMs: options.callTimeoutMs ?? 1_000,
    },
  } as unknown as CheckStatusesDeps;
  return {
    run: () => checkMessageStatuses(deps),
    settled,
    claims,
    claimedIds,
    locks,
    transactions: () => transactions,
    rescheduled,
    refunds,
    decrypted,
    maxInFlight: () => maxInFlight,
    failDecrypt: () => {
      decryptFails = true;
    },
  };
}

describe("checkMessageStatuses", () => {
  it("settles each batch in one call, with at most `concurrency` provider calls in flight", async () => {
    const round = setup({ messages: due(25, "simulator"), report: () => ({ kind: "delivered" }) });
    expect(await round.run()).toEqual({
      checked: 25,
      delivered: 25,
      undeliverable: 0,
      failed: 0,
      expired: 0,
      errors: 0,
    });
    expect(round.settled.map((batch) => batch.length)).toEqual([10, 10, 5]);
    expect(round.maxInFlight()).toBeLessThanOrEqual(4);
    expect(round.maxInFlight()).toBeGreaterThan(1);
    // The simulator's messages: locked and settled batch by batch, one transaction each, never claimed.
    expect(round.locks).toEqual([10, 10, 5]);
    expect(round.transactions()).toBe(3);
    expect(round.claims).toEqual([]);
  });

  it("takes a batch oldest due first whatever the provider: uBill's claimed and asked after the commit, the simulator's settled (or due an interval on) inside it", async () => {
    const messages = [
      ...due(2, "ubill").map((m, i) => ({ ...m, id: `msg_u${i}`, providerRef: `u-${i}` })),
      ...due(3, "simulator"),
    ];
    const round = setup({
      messages,
      report: (query) => (query.providerRef === "ref-1" ? { kind: "pending" } : { kind: "delivered" }),
    });
    expect(await round.run()).toMatchObject({ checked: 5, delivered: 4, errors: 0 });
    expect(round.locks).toEqual([5]);
    expect(round.transactions()).toBe(1);
    expect(round.claimedIds).toEqual([["msg_u0", "msg_u1"]]);
    expect(round.claims.map((at) => at.getTime() - NOW.getTime())).toEqual([20_000]);
    // Settled in the transaction: the simulator's two; after it, uBill's.
    expect(round.settled.map((batch) => batch.map((change) => change.messageId))).toEqual([
      [messages[2]!.id, messages[4]!.id],
      ["msg_u0", "msg_u1"],
    ]);
    expect(round.rescheduled).toEqual([{ ids: [messages[3]!.id], at: new Date(NOW.getTime() + 20_000) }]);
  });

  it("holds a claimed batch for as long as its calls may take, so no other round asks again meanwhile; what stays pending is due one interval after it was asked", async () => {
    // Fast calls: the hold is one interval, and nothing needs rescheduling.
    const fast = setup({ messages: due(9, "ubill"), report: () => ({ kind: "pending" }) });
    await fast.run();
    expect(fast.claims.map((at) => at.getTime() - NOW.getTime())).toEqual([20_000]);
    expect(fast.rescheduled).toEqual([]);
    // A batch of 10, 4 at a time, each call up to 10 s: 30 s in flight, past the 20 s interval.
    const slow = setup({
      messages: due(9, "ubill"),
      callTimeoutMs: 10_000,
      report: (query) => (query.providerRef === "ref-0" ? { kind: "delivered" } : { kind: "pending" }),
    });
    const counts = await slow.run();
    expect(counts.delivered).toBe(1);
    expect(slow.claims.map((at) => at.getTime() - NOW.getTime())).toEqual([50_000]);
    expect(slow.rescheduled).toHaveLength(1);
    expect(slow.rescheduled[0]?.ids).toHaveLength(8);
    expect(slow.rescheduled[0]?.ids).not.toContain(due(1, "ubill")[0]?.id);
    expect(slow.rescheduled[0]?.at.getTime()).toBe(NOW.getTime() + 20_000);
  });

  it("decrypts the number only for a provider that reports per number", async () => {
    const simulator = setup({ messages: due(3, "simulator"), report: () => ({ kind: "delivered" }) });
    await simulator.run();
    expect(simulator.decrypted).toEqual([]);
    const ubill = setup({
      messages: due(3, "ubill"),
      reportsByRecipient: true,
      report: (query) =>
        query.to === "+995555123456" ? { kind: "delivered" } : { kind: "error", reason: "no number" },
    });
    expect((await ubill.run()).delivered).toBe(3);
    expect(ubill.decrypted).toHaveLength(3);
  });

  it("counts a number that does not decrypt as an error and leaves the message submitted", async () => {
    const round = setup({
      messages: due(2, "ubill"),
      reportsByRecipient: true,
      report: () => ({ kind: "delivered" }),
    });
    round.failDecrypt();
    expect(await round.run()).toMatchObject({ checked: 2, delivered: 0, errors: 2 });
    expect(round.settled).toEqual([]);
  });

  it("leaves pending messages alone, refunds reported failures, and expires overdue ones", async () => {
    const overdue = due(2, "ubill", new Date(NOW.getTime() - 73 * 3_600_000));
    const fresh = due(2, "ubill").map((message, i) => ({ ...message, id: `msg_fresh${i}`.padEnd(30, "0") }));
    const round = setup({
      messages: [...overdue, ...fresh],
      report: (query) =>
        query.providerRef === "ref-0" && fresh.length ? { kind: "pending" } : { kind: "failed", reason: "x" },
    });
    const counts = await round.run();
    // overdue[0] and fresh[0] (ref-0) are pending: the overdue one expires, the fresh one stays.
    expect(counts).toMatchObject({ checked: 4, failed: 2, expired: 1 });
    expect(
      round.settled
        .flat()
        .map((change) => change.status)
        .sort(),
    ).toEqual(["failed", "failed", "unknown"]);
    expect(round.refunds).toHaveLength(2);
  });
});
