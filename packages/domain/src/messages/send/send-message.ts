// POST /v1/messages (spec 4.2): validate, record and submit one message, in
// four named steps:
//
//   A test key's send whose simulator is pure (provider.pure: its answer
//   depends on the number alone) asks it first (2) and then does 1 and 3 in
//   one durable statement (recordAnswered: the claim, the per-minute count,
//   the message as the simulator left it and the key's answer, or nothing).
//   A verification's send (its row goes in between the claim and the
//   simulator) and one the simulator does not reach (the claim is taken and
//   given back) take the steps below.
//
//   1. write ahead   claim the key, which also finds an earlier record for it
//                    (then nothing is written: a replay, a 409, or a wait for
//                    the first request's answer). Only the request that
//                    claimed the key is counted against the per-minute limit;
//                    a refusal gives the key back.
//                      test keys: one statement claims and counts, committed
//                        asynchronously: only the in-process simulator sees
//                        the message before its answer is written.
//                      live keys: the queued message with the claim, the
//                        per-recipient and per-minute counts and the credit
//                        reservation, all or nothing: one statement for a
//                        paid project that no rule refuses, otherwise a
//                        transaction (which finds the refusal, or takes the
//                        free-tier allowance); committed without waiting for
//                        the disk, then made durable (madeDurable) before
//                        uBill is contacted.
//   2. submit        only the simulator ever sees a test key's message.
//   3. record        test keys: the message is written once, as the simulator
//                    left it, with the key's answer (one durable statement).
//                    Live keys: one statement moves the message out of
//                    `queued` and stores the answer, committed without
//                    waiting for the disk and made durable after the live
//                    slot is given back, before the answer. Retried while the
//                    database is unavailable. Provider not reached: the claim
//                    (and a live send's queued message) is released (503,
//                    retry is safe).
//
// A live send is first admitted, and its database work runs in the live
// sends' slots (live-admission.ts). The mechanisms, the glossary and the
// table of paths: README.md beside this file.
//
// A duplicate that finds the key in flight waits for the first request's
// answer (polling the record, so it works across instances) and replays it.
// A key this instance has answered (or replayed) is answered again from
// memory, before anything is prepared or read (answered-keys.ts).
// A crash between 1 and 3 leaves a live send's message queued, which the
// recovery sweep turns into `unknown` (never re-sent), or a two-statement
// test send's claim without a message, which the next duplicate takes over
// once its wait is over (nothing was sent or answered). A one-statement test
// send leaves all of it or none.
import { DEFAULT_LOCALE, renderMessage } from "@sms/templates";
import { canonicalRequest, type IdempotencyScope } from "../../model/idempotency.ts";
import { systemTimer } from "../../ports.ts";
import type { SubmitOutcome } from "../../provider.ts";
import { awaitFirstRequest } from "./await-first-request.ts";
import { type LiveAdmission, liveAdmission } from "./live-admission.ts";
import { persist } from "./persist.ts";
import { prepare } from "./prepare.ts";
import { record, recordAnswered } from "./record.ts";
import { submit } from "./submit.ts";
import type {
  Claimed,
  Draft,
  SendMessageDeps,
  SendMessageInput,
  SendMessageResult,
  SendPhase,
  Taken,
} from "./types.ts";
import { writeAhead } from "./write-ahead.ts";
import { madeDurable } from "./write-ahead-live.ts";

export { createProjectRefusals, type ProjectRefusals } from "./project-refusals.ts";
export type {
  LivePlaces,
  SendMessageDeps,
  SendMessageInput,
  SendMessageRequest,
  SendMessageResult,
  SendMessageStore,
  SendMessageTx,
  SendPhase,
} from "./types.ts";

/** How often one request starts over after the request holding its key gave the key back. */
const MAX_ATTEMPTS = 3;

/** One send as the steps share it: its key, its fingerprint's input, its admission and its phases' clock. */
type Send = {
  deps: SendMessageDeps;
  input: SendMessageInput;
  scope: IdempotencyScope;
  fingerprintInput: string;
  admission: LiveAdmission;
  /** Tells deps.observe how long `phase` took, and starts the next step's clock. */
  stepDone: (phase: SendPhase) => void;
};

/** What one attempt came to: the answer, or the key taken by another request (then its answer is awaited). */
type Attempt = SendMessageResult | Taken;

export async function sendMessage(
  deps: SendMessageDeps,
  input: SendMessageInput,
): Promise<SendMessageResult> {
  const { request } = input;
  const locale = request.locale ?? DEFAULT_LOCALE;
  const fingerprintInput = input.identity ?? canonicalRequest(request, locale);
  const scope: IdempotencyScope = {
    projectId: input.project.id,
    mode: input.mode,
    key: input.idempotencyKey,
  };

  // The same body as an answered request was valid when it was answered: its
  // replay needs no rendering. A different body is checked first, so that an
  // invalid one is a 400 whatever its key (spec 4.2's order).
  const askedAt = deps.clock.now();
  const known = await deps.answered?.get(scope, askedAt, () => deps.store.idempotency.find(scope, askedAt));
  if (known && (await deps.keyring.verifyFingerprint(fingerprintInput, known.fingerprint))) {
    return { ok: true, replayed: true, message: known.responseBody };
  }
  const rendered = renderMessage({ template: request.template, variables: request.variables, locale });
  if (!rendered.ok) return { ok: false, code: rendered.code, detail: rendered.message };
  if (known) return { ok: false, code: "idempotency_key_reused" };

  const timer = deps.timer ?? systemTimer;
  const admission = liveAdmission(deps, input, timer);
  let stepStarted = timer.monotonicMs();
  const stepDone = (phase: SendPhase) => {
    const now = timer.monotonicMs();
    deps.observe?.(phase, now - stepStarted, input.mode);
    stepStarted = now;
  };
  const send: Send = { deps, input, scope, fingerprintInput, admission, stepDone };
  // A test send whose simulator is pure asks it first and writes everything in one statement
  // (recordAnswered); a verification's (its row goes between the claim and the simulator) and a
  // "not reached" answer (the claim is taken and given back) take the steps.
  const oneStatement = input.mode === "test" && !input.beforeSubmit && deps.providers.test.pure === true;
  for (let attempt = 1; ; attempt++) {
    const draft = await prepare(deps, input, { scope, locale, fingerprintInput, rendered });
    stepDone("prepare");
    /** The pure simulator's answer, asked before the write-ahead (a "not reached" one takes the steps). */
    const asked = oneStatement ? await submit(draft, input.logger) : null;
    let result: Attempt;
    if (asked && asked.kind !== "unreachable") {
      stepDone("submit");
      result = await recordAnswered(deps, draft, asked);
      stepDone("record");
    } else {
      result = await throughTheSteps(send, draft, asked);
    }
    if (!("taken" in result)) return result;
    const answer = await afterTaken(send, result, attempt);
    if (answer !== "again") return answer;
  }
}

/**
 * The steps: (for a live send that would wait to be admitted, the key looked up first), admission, the
 * write-ahead, the submit and the record. `asked`: the simulator's "not reached" answer, already known.
 */
async function throughTheSteps(send: Send, draft: Draft, asked: SubmitOutcome | null): Promise<Attempt> {
  const { deps, input, admission, stepDone } = send;
  // No room to be admitted: a key already used is answered before waiting for it, as when there is room
  // (a replay, a 409, or the wait for the request that holds the key), never with a 503. One read, and
  // only when the send would wait (with room, the write-ahead finds the key as usual), in a live slot
  // like the rest of a live send's database work: a burst of them waits there, not at the pool.
  if (admission.wouldWait()) {
    const prior = await admission.inSlot(() => deps.store.idempotency.find(send.scope, deps.clock.now()));
    if (prior) return { taken: true, prior };
  }
  // A live send is admitted before its write-ahead, holding nothing while it waits; one not admitted in
  // time is a 503 with nothing written (the same as uBill not reached: retry is safe). It takes a place
  // at uBill for the call only (atPlace).
  const reached = await admission.admitted(async () => {
    if (input.mode === "live" && deps.liveSubmissions) stepDone("queue");
    const written = await admission.inSlot(() => writeAhead(deps, input, draft));
    stepDone("write_ahead");
    if ("ok" in written || "taken" in written) return written;
    const durable = input.mode === "test" || (await madeDurable(deps, input.logger, draft));
    await input.beforeSubmit?.(draft.queued.messageId);
    const outcome: SubmitOutcome =
      asked ??
      (durable
        ? await admission.atPlace(draft)
        : { kind: "unreachable", reason: "the write-ahead could not be made durable" });
    stepDone("submit");
    return { written, outcome };
  });
  if (reached === "full") {
    stepDone("queue");
    return { ok: false, code: "provider_unavailable" };
  }
  if ("ok" in reached || "taken" in reached) return reached;
  return recorded(send, draft, reached);
}

/** 3. Record, in a live slot ahead of every waiting write-ahead; a live send's made durable before it answers. */
async function recorded(
  send: Send,
  draft: Draft,
  { written, outcome }: { written: Claimed; outcome: SubmitOutcome },
): Promise<SendMessageResult> {
  const { deps, input } = send;
  const result = await send.admission.inSlot(() => record(deps, input, draft, outcome, written), {
    first: true,
  });
  // A live send's record commits without waiting for the disk, so that its slot is free one disk flush
  // sooner; it is made durable here, with the records and write-aheads waiting at the same moment,
  // before the answer leaves. A send that reached no provider has nothing to wait for: its release
  // commits durably.
  if (input.mode === "live" && outcome.kind !== "unreachable")
    await persist(deps, input.logger, "record", () => deps.store.messages.flushCommitted());
  send.stepDone("record");
  return result;
}

/**
 * Another request holds the key: its answer, or "again" when it sent nothing and gave the key back
 * (503, 429…) and this one is now a fresh attempt.
 */
async function afterTaken(send: Send, taken: Taken, attempt: number): Promise<SendMessageResult | "again"> {
  const answer = await awaitFirstRequest(send.deps, send.scope, send.fingerprintInput, taken.prior);
  if (answer !== "released") return answer;
  if (attempt < MAX_ATTEMPTS) return "again";
  return { ok: false, code: "first_request_unresolved", retryAfterMs: 1_000 };
}
