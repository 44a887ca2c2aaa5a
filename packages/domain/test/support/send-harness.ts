// The harness of sendMessage's unit tests (src/messages/send/send-message.*.test.ts): a hand-written
// in-memory store (fake-send-store.ts, held to the real store's contract by
// send-store.contract.integration.test.ts), a real keyring, scripted providers and a fake timer. Each
// test file calls sendHarness() inside its describe: fresh tables and the clock at T0 before each test.
import { generateKeySpec, parseKeyring } from "@sms/crypto";
import { beforeEach, expect } from "vitest";
import { createAnsweredKeys } from "../../src/messages/answered-keys.ts";
import type { ProjectRefusals } from "../../src/messages/send/project-refusals.ts";
import { type LivePlaces, type SendMessageInput, sendMessage } from "../../src/messages/send/send-message.ts";
import type { MessageResource } from "../../src/model/message.ts";
import type { SmsProvider, SubmitOutcome, SubmitRequest } from "../../src/provider.ts";
import type { Slots } from "../../src/slots.ts";
import { emptyTables, fakeStore, type Hooks, type Tables } from "./fake-send-store.ts";

export const T0 = new Date("2026-11-22T10:00:30Z");
export const keyring = parseKeyring(generateKeySpec("unit"));
export const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

export function scripted(name: "simulator" | "ubill", outcomes: Array<SubmitOutcome | Error>, pure = false) {
  const submitted: SubmitRequest[] = [];
  const provider: SmsProvider = {
    name,
    pure,
    async submit(request) {
      submitted.push(request);
      const next = outcomes.shift() ?? { kind: "accepted", providerRef: `ref-${submitted.length}` };
      if (next instanceof Error) throw next;
      return next;
    },
    checkStatus: async () => ({ kind: "pending" }),
  };
  return { provider, submitted };
}

/** Holds every send `provider` is asked for until open() is called; `calls` counts them. */
export function holdAtUbill(provider: SmsProvider) {
  const submit = provider.submit.bind(provider);
  const held = { calls: 0, open: () => {} };
  const gate = new Promise<void>((resolve) => {
    held.open = resolve;
  });
  provider.submit = async (request) => {
    held.calls++;
    await gate;
    return submit(request);
  };
  return held;
}

/** Waits, a millisecond at a time (at most 2 000 turns), until `done()`; fails the test if it never is. */
export async function settleUntil(done: () => boolean) {
  for (let turn = 0; turn < 2_000 && !done(); turn++) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(done()).toBe(true);
}

/** Counts the reads of a key's record (`store.idempotency.find`) from now on; returns the count so far. */
export function countFinds(store: ReturnType<typeof fakeStore>): () => number {
  const find = store.idempotency.find;
  let count = 0;
  store.idempotency.find = (...args) => {
    count++;
    return find(...args);
  };
  return () => count;
}

/** uBill's places as the tests read them: the calls in use and waiting, then the room in use and waiting. */
export const placesState = (bound: LivePlaces) => [
  bound.places.inUse,
  bound.places.waiting,
  bound.admitted.inUse,
  bound.admitted.waiting,
];

/** The tables and the clock a test reads and moves (reset before each test). */
export type SendState = { tables: Tables; now: Date };

/**
 * Fresh tables and the clock at T0 before each test; `setup` builds the send's dependencies over them,
 * `inFlightRecord` leaves the record of a first request still waiting for the provider.
 */
export function sendHarness() {
  const state: SendState = { tables: emptyTables(), now: T0 };
  beforeEach(() => {
    state.tables = emptyTables();
    state.now = T0;
  });

  function setup(
    options: {
      test?: Array<SubmitOutcome | Error>;
      live?: Array<SubmitOutcome | Error> | null;
      perMinute?: number;
      perRecipient?: { perMinute: number; perDay: number };
      freeTier?: number;
      hooks?: Hooks;
      /** The instance's answered keys, on the fake timer (none: every replay reads the store). */
      answered?: { maxEntries?: number; revalidateAfterMs?: number };
      /** Called on every pause of a bounded wait, after the fake time moved on. */
      onSleep?: (sleptMs: number) => void;
      /** Live sends' database slots. */
      liveSlots?: Slots;
      /** uBill's places for live sends. */
      liveSubmissions?: LivePlaces;
      /** Every transaction waits for this before it starts (open ones counted in `transactions`). */
      transactionGate?: Promise<void>;
      /** The instance's memory of projects whose live sends go straight to the transaction. */
      projectRefusals?: ProjectRefusals;
      /** The test provider is pure (the simulator): a test send is one statement (claimAnswered). */
      pure?: boolean;
    } = {},
  ) {
    const test = scripted("simulator", options.test ?? [], options.pure);
    const live = options.live === null ? null : scripted("ubill", options.live ?? []);
    // Real time, faked: the waits run out without waiting.
    const timer = {
      elapsed: 0,
      sleeps: 0,
      monotonicMs: () => timer.elapsed,
      async sleep(ms: number) {
        timer.elapsed += ms;
        timer.sleeps++;
        options.onSleep?.(timer.elapsed);
      },
    };
    const store = fakeStore(state.tables, options.hooks);
    const transactions = { open: 0, mostOpen: 0 };
    const gate = options.transactionGate;
    if (gate) {
      /** Holds `work` at the gate, counted as a write-ahead open (a transaction, or the paid one's statement). */
      const gated = async <T>(work: () => Promise<T>): Promise<T> => {
        transactions.open++;
        transactions.mostOpen = Math.max(transactions.mostOpen, transactions.open);
        try {
          await gate;
          return await work();
        } finally {
          transactions.open--;
        }
      };
      const inner = store.transaction.bind(store);
      store.transaction = (work) => gated(() => inner(work));
      const paid = store.messages.writeAheadPaid.bind(store.messages);
      store.messages.writeAheadPaid = (m, counters) => gated(() => paid(m, counters));
    }
    const deps = {
      store,
      liveSlots: options.liveSlots,
      liveSubmissions: options.liveSubmissions,
      keyring,
      clock: { now: () => state.now },
      timer,
      providers: { test: test.provider, live: live?.provider ?? null },
      answered: options.answered && createAnsweredKeys({ ...options.answered, timer }),
      projectRefusals: options.projectRefusals,
      config: {
        messagesPerMinute: options.perMinute ?? 100,
        recipientLimits: options.perRecipient ?? { perMinute: 2, perDay: 10 },
        freeTierDailySegments: options.freeTier ?? 20,
        defaultSender: "SMSGE",
        simulatorDelayMs: 5_000,
        inFlightWaitMs: 15_000,
        recordRetryMs: 30_000,
        unresolvedRetryAfterMs: 60_000,
      },
    };
    const send = (overrides: Partial<SendMessageInput> & { to?: string; code?: string } = {}) =>
      sendMessage(deps, {
        project: { id: "prj_unit", sender: null, senderBrandId: null, claimed: true },
        mode: "test",
        keyId: "key_unit",
        idempotencyKey: "k-1",
        logger: silent,
        request: {
          to: overrides.to ?? "+995555123456",
          template: "verification_code",
          variables: { code: overrides.code ?? "482913" },
          locale: "en",
        },
        ...overrides,
      });
    return { send, test, live, timer, transactions, store };
  }

  /** The record a first request with the default key and body leaves while it waits for the provider. */
  async function inFlightRecord(body: { code?: string } = {}) {
    const record = {
      id: "idem_1",
      fingerprint: await keyring.fingerprint(
        JSON.stringify(["+995555123456", "verification_code", [["code", body.code ?? "482913"]], "en"]),
      ),
      response: null as MessageResource | null,
      expiresAt: new Date(T0.getTime() + 86_400_000),
      messageId: "msg_first" as string | undefined,
    };
    state.tables.records.set("prj_unit|test|k-1", record);
    return record;
  }

  /** A live send's input. */
  const live = (overrides: Partial<SendMessageInput> & { to?: string } = {}) => ({
    mode: "live" as const,
    ...overrides,
  });
  /** How each live write-ahead since `from` ran: the one statement, or the transaction. */
  const ways = (from = 0) =>
    state.tables.writeAheads.slice(from).map((step) => (step.inTransaction ? "transaction" : "statement"));
  return { state, setup, inFlightRecord, live, ways };
}

export const FIRST_ANSWER: MessageResource = {
  id: "msg_first",
  object: "message",
  to: "+9955••••••56",
  status: "submitted",
  segments: 1,
  error: null,
  created_at: "2026-11-22T10:00:30Z",
  updated_at: "2026-11-22T10:00:30Z",
};
