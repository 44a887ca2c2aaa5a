// POST /v1/messages (spec 4.2): validate, record and submit one message, in
// four named steps:
//
//   1. write ahead   claim the key, which also finds an earlier record for it
//                    (then nothing is written: a replay, a 409, or a wait for
//                    the first request's answer). Only the request that
//                    claimed the key is counted against the per-minute limit;
//                    a refusal gives the key back.
//                      test keys: one statement claims and counts, committed
//                        asynchronously: only the in-process simulator sees
//                        the message before its answer is written.
//                      live keys: one transaction writes the queued message
//                        with the claim, counts the per-minute and
//                        per-recipient limits, takes the free-tier allowance
//                        and reserves the credits; durable before uBill is
//                        contacted.
//   2. submit        only the simulator ever sees a test key's message.
//   3. record        test keys: the message is written once, as the simulator
//                    left it, with the key's answer (one durable statement).
//                    Live keys: one statement moves the message out of
//                    `queued` and stores the answer. Retried while the
//                    database is unavailable. Provider not reached: the claim
//                    (and a live send's queued message) is released (503,
//                    retry is safe).
//
// A duplicate that finds the key in flight waits for the first request's
// answer (polling the record, so it works across instances) and replays it.
// A key this instance has answered (or replayed) is answered again from
// memory, before anything is prepared or read (answered-keys.ts).
// A crash between 1 and 3 leaves a live send's message queued, which the
// recovery sweep turns into `unknown` (never re-sent), or a test send's claim
// without a message, which the next duplicate takes over once its wait is
// over (nothing was sent or answered).
import { type Keyring, newId } from "@sms/crypto";
import { DEFAULT_LOCALE, type Locale, renderMessage, type TemplateId } from "@sms/templates";
import { consumeEach } from "../limits/consume-limits.ts";
import { canonicalRequest, IDEMPOTENCY_TTL_MS, type IdempotencyScope } from "../model/idempotency.ts";
import type { AuthenticatedProject, KeyMode } from "../model/keys.ts";
import {
  BUCKETS,
  type LimitCheck,
  type LimitState,
  limitState,
  recipientFingerprintInput,
  windowOf,
} from "../model/limits.ts";
import { type MessageResource, messageError, toMessageResource } from "../model/message.ts";
import { maskRecipient } from "../model/recipient.ts";
import { type Clock, type Logger, systemTimer, type Timer } from "../ports.ts";
import type { SmsProvider, SubmitOutcome } from "../provider.ts";
import {
  type IdempotencyStore,
  isDatabaseUnavailable,
  type LedgerStore,
  type LimitStore,
  type MessageStore,
  type Outcome,
  type PriorRecord,
  type ProjectStore,
  type QueuedMessage,
  transactionOrRollback,
} from "../store/index.ts";
import type { AnsweredKeys } from "./answered-keys.ts";

export type SendMessageRequest = {
  to: string;
  template: string;
  variables: unknown;
  locale?: Locale;
};

/** The statements a send uses, inside and outside its transactions. */
export type SendMessageTx = {
  messages: Pick<MessageStore, "insertQueued" | "recordOutcome" | "releaseUnsent">;
  projects: Pick<ProjectStore, "hasPaidCredits">;
  limits: Pick<LimitStore, "consume" | "read" | "release">;
  ledger: Pick<LedgerStore, "reserve" | "refund">;
};
export type SendMessageStore = {
  idempotency: Pick<IdempotencyStore, "find" | "claimCounted" | "releaseClaim" | "releaseAbandoned">;
  messages: Pick<MessageStore, "insertAnswered" | "recordOutcome" | "releaseUnsent" | "read">;
  transaction<T>(work: (tx: SendMessageTx) => Promise<T>): Promise<T>;
};

export type SendMessageDeps = {
  store: SendMessageStore;
  keyring: Keyring;
  clock: Clock;
  /** Real time for the bounded waits (default: the system's). */
  timer?: Timer;
  providers: { test: SmsProvider; live: SmsProvider | null };
  /** This instance's answered keys (answered-keys.ts): replays it knows skip the database. */
  answered?: AnsweredKeys;
  config: {
    messagesPerMinute: number;
    /** Live messages of a project to one number: per ten-minute slot and per UTC day. */
    recipientLimits: { perTenMinutes: number; perDay: number };
    freeTierDailySegments: number;
    defaultSender: string;
    /** When a test message's first status check is due, after submission. */
    simulatorDelayMs: number;
    /**
     * How long a duplicate waits for the first request with its key to
     * answer: the provider's submit deadline plus a statement's.
     */
    inFlightWaitMs: number;
    /** How long recording the provider's answer is retried while the database is unavailable. */
    recordRetryMs: number;
    /** When a first request that never answered will have been settled by the recovery sweep. */
    unresolvedRetryAfterMs: number;
  };
};

export type SendMessageInput = {
  project: AuthenticatedProject;
  mode: KeyMode;
  keyId: string;
  idempotencyKey: string;
  request: SendMessageRequest;
  /** The request's logger (carries its request id). */
  logger: Logger;
};

export type SendMessageResult =
  /** A new submission attempt (201); `rateLimit` is the per-minute window after it. */
  | { ok: true; replayed: false; message: MessageResource; rateLimit: LimitState }
  /** The key's first answer, unchanged (200); a duplicate in flight waited for it. */
  | { ok: true; replayed: true; message: MessageResource }
  /** The templates package's verdict; `detail` is its caller-facing sentence naming the variable. */
  | { ok: false; code: "invalid_template" | "invalid_variables"; detail: string }
  /** The key belongs to a different request. */
  | { ok: false; code: "idempotency_key_reused" }
  /**
   * The first request with this key gave no answer within the wait (it
   * crashed, or the database kept it from recording one): retry after
   * `retryAfterMs`, when the recovery sweep will have settled it.
   */
  | { ok: false; code: "first_request_unresolved"; retryAfterMs: number }
  /** The project's per-minute limit, or a per-recipient limit (`subject`): nothing sent. */
  | { ok: false; code: "rate_limited"; subject: "project" | "recipient"; limit: LimitState }
  /** The free tier's daily segments: nothing sent. */
  | { ok: false; code: "daily_limit_reached"; limit: LimitState }
  | { ok: false; code: "insufficient_credits" }
  /** The provider was not reached: nothing sent, the key released. */
  | { ok: false; code: "provider_unavailable" };

type Refusal = Extract<SendMessageResult, { ok: false }>;

/** Everything about the message that is known before anything is written. */
type Draft = {
  queued: QueuedMessage;
  to: string;
  text: string;
  sender: { name: string; brandId: number | null };
  provider: SmsProvider | null;
  /** The keyed fingerprint naming this recipient's counters (live sends only). */
  recipient: string | null;
};

/** The write-ahead's result for the request that claimed the key. */
type Claimed = { freeTierSegments: number; rateLimit: LimitState };

/** Another request holds the key: its record (null: look it up). */
type Taken = { taken: true; prior: PriorRecord | null };

/** How often one request starts over after the request holding its key gave the key back. */
const MAX_ATTEMPTS = 3;

export async function sendMessage(
  deps: SendMessageDeps,
  input: SendMessageInput,
): Promise<SendMessageResult> {
  const { request } = input;
  const locale = request.locale ?? DEFAULT_LOCALE;
  const fingerprintInput = canonicalRequest(request, locale);
  const scope: IdempotencyScope = {
    projectId: input.project.id,
    mode: input.mode,
    key: input.idempotencyKey,
  };

  // The same body as an answered request was valid when it was answered: its
  // replay needs no rendering. A different body is checked first, so that an
  // invalid one is a 400 whatever its key (spec 4.2's order).
  const known = deps.answered?.get(scope, deps.clock.now());
  if (known && (await deps.keyring.verifyFingerprint(fingerprintInput, known.fingerprint))) {
    return { ok: true, replayed: true, message: known.responseBody };
  }
  const rendered = renderMessage({ template: request.template, variables: request.variables, locale });
  if (!rendered.ok) return { ok: false, code: rendered.code, detail: rendered.message };
  if (known) return { ok: false, code: "idempotency_key_reused" };

  for (let attempt = 1; ; attempt++) {
    const draft = await prepare(deps, input, { scope, locale, fingerprintInput, rendered });
    const written = await writeAhead(deps, input, draft);
    if ("ok" in written) return written;
    if ("taken" in written) {
      const answer = await awaitFirstRequest(deps, scope, fingerprintInput, written.prior);
      if (answer !== "released") return answer;
      // The first request sent nothing and gave the key back (503, 429…):
      // this one is now a fresh attempt.
      if (attempt < MAX_ATTEMPTS) continue;
      return { ok: false, code: "first_request_unresolved", retryAfterMs: 1_000 };
    }
    const outcome = await submit(draft, input.logger);
    return record(deps, input, draft, outcome, written);
  }
}

/** The message as it will be written: ids, ciphertexts, sender, provider. */
async function prepare(
  deps: SendMessageDeps,
  input: SendMessageInput,
  facts: {
    scope: IdempotencyScope;
    locale: Locale;
    fingerprintInput: string;
    rendered: { template: TemplateId; text: string; segments: number; encoding: string };
  },
): Promise<Draft> {
  const { keyring } = deps;
  const { scope, rendered } = facts;
  const now = deps.clock.now();
  const messageId = newId("msg");
  const sender = {
    name: input.project.sender ?? deps.config.defaultSender,
    brandId: input.project.senderBrandId,
  };
  const live = input.mode === "live";
  const provider = live ? deps.providers.live : deps.providers.test;
  const [fingerprint, textCiphertext, recipientCiphertext, recipient] = await Promise.all([
    keyring.fingerprint(facts.fingerprintInput),
    keyring.encrypt(rendered.text, messageId),
    keyring.encrypt(input.request.to, messageId),
    live ? keyring.fingerprint(recipientFingerprintInput(scope.projectId, input.request.to)) : null,
  ]);
  return {
    queued: {
      messageId,
      idempotencyId: newId("idem"),
      scope,
      fingerprint,
      expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      apiKeyId: input.keyId,
      recipientMasked: maskRecipient(input.request.to),
      recipientCiphertext,
      textCiphertext,
      template: rendered.template,
      locale: facts.locale,
      sender: sender.name,
      segments: rendered.segments,
      encoding: rendered.encoding,
      provider: provider?.name ?? "ubill",
      creditsReserved: live ? rendered.segments : 0,
      now,
    },
    to: input.request.to,
    text: rendered.text,
    sender,
    provider,
    recipient,
  };
}

/**
 * 1. Write ahead, committed before the provider is contacted. The request
 * that claims the key is counted; one that finds the key taken is not.
 */
async function writeAhead(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
): Promise<Claimed | Taken | Refusal> {
  return input.mode === "test" ? writeAheadTest(deps, input, draft) : writeAheadLive(deps, draft);
}

/**
 * Test keys: one statement claims the key and counts the send (asynchronous
 * commit: the answer's durable commit makes both durable before anything is
 * answered). Over the limit, the claim is given back.
 */
async function writeAheadTest(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
): Promise<Claimed | Taken | Refusal> {
  const { queued } = draft;
  const limit = deps.config.messagesPerMinute;
  const window = windowOf("minute", queued.now);
  const claim = await deps.store.idempotency.claimCounted(queued, {
    bucket: BUCKETS.messages(queued.scope.projectId),
    ...window,
    limit,
  });
  if (!claim.claimed) return { taken: true, prior: claim.prior };
  const check = { limit, window: "minute" as const };
  if (claim.used === null) {
    await persist(deps, input.logger, "release", () =>
      deps.store.idempotency.releaseClaim(queued.idempotencyId),
    );
    return {
      ok: false,
      code: "rate_limited",
      subject: "project",
      limit: limitState(check, limit, window.end),
    };
  }
  return { freeTierSegments: 0, rateLimit: limitState(check, claim.used, window.end) };
}

/**
 * Live keys, one transaction: the key and the queued message first (a taken
 * key ends here, nothing else counted), then the per-minute limit, the
 * per-recipient limits, the free-tier allowance (projects without paid
 * credits) and the credit reservation. A refusal rolls everything back.
 */
function writeAheadLive(deps: SendMessageDeps, draft: Draft): Promise<Claimed | Taken | Refusal> {
  const { queued } = draft;
  const projectId = queued.scope.projectId;
  const { config } = deps;
  return transactionOrRollback<Claimed | Taken, Refusal, SendMessageTx>(deps.store, async (tx, rollback) => {
    const claim = await tx.messages.insertQueued(queued);
    if (!claim.written) return { taken: true, prior: claim.prior };
    const recipient = draft.recipient ?? "";
    const checks: LimitCheck[] = [
      {
        bucket: BUCKETS.messages(projectId),
        window: "minute",
        limit: config.messagesPerMinute,
        refusal: "rate_limited",
      },
      {
        bucket: BUCKETS.recipientTenMinutes(projectId, recipient),
        window: "ten_minutes",
        limit: config.recipientLimits.perTenMinutes,
        refusal: "rate_limited",
      },
      {
        bucket: BUCKETS.recipientDay(projectId, recipient),
        window: "utc_day",
        limit: config.recipientLimits.perDay,
        refusal: "rate_limited",
      },
    ];
    const counted = await consumeEach(tx.limits, checks, queued.now);
    if (!counted.ok) {
      const subject = counted.limit.window === "minute" ? "project" : "recipient";
      return rollback({ ok: false, code: "rate_limited", subject, limit: counted.limit });
    }
    const rateLimit = counted.states[0] as LimitState;
    let freeTierSegments = 0;
    if (!(await tx.projects.hasPaidCredits(projectId))) {
      const taken = await consumeEach(
        tx.limits,
        [
          {
            bucket: BUCKETS.freeTierSegments(projectId),
            window: "utc_day",
            limit: config.freeTierDailySegments,
            cost: queued.segments,
            refusal: "daily_limit_reached",
          },
        ],
        queued.now,
      );
      if (!taken.ok) return rollback({ ok: false, code: "daily_limit_reached", limit: taken.limit });
      freeTierSegments = queued.segments;
    }
    const reserved = await tx.ledger.reserve({
      projectId,
      messageId: queued.messageId,
      amount: queued.creditsReserved,
      now: queued.now,
    });
    if (!reserved) return rollback({ ok: false, code: "insufficient_credits" });
    return { freeTierSegments, rateLimit };
  });
}

/**
 * Another request holds the key. A different request gets 409; the same
 * request waits for the first one's answer and replays it, polling the
 * record with backoff (any instance may hold the key) for at most
 * `inFlightWaitMs`. "released": the first request sent nothing and gave the
 * key back, or its claim was abandoned and this request gave it up, so this
 * one may start over.
 */
async function awaitFirstRequest(
  deps: SendMessageDeps,
  scope: IdempotencyScope,
  fingerprintInput: string,
  prior: PriorRecord | null,
): Promise<SendMessageResult | "released"> {
  const timer = deps.timer ?? systemTimer;
  const verified = new Map<string, boolean>();
  let record = prior ?? (await deps.store.idempotency.find(scope, deps.clock.now()));
  // The wait is for one claim: a newer claim of the key (the first one was
  // given back or given up meanwhile) starts it again.
  let claim: string | null = null;
  let started = timer.monotonicMs();
  for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
    if (record === null) return "released";
    if (record.messageId !== claim) {
      claim = record.messageId;
      started = timer.monotonicMs();
    }
    let same = verified.get(record.fingerprint);
    if (same === undefined) {
      same = await deps.keyring.verifyFingerprint(fingerprintInput, record.fingerprint);
      verified.set(record.fingerprint, same);
    }
    if (!same) return { ok: false, code: "idempotency_key_reused" };
    if (record.responseBody !== null) {
      const { fingerprint, expiresAt, responseBody } = record;
      deps.answered?.remember(scope, { fingerprint, expiresAt, responseBody });
      return { ok: true, replayed: true, message: record.responseBody };
    }
    const left = deps.config.inFlightWaitMs - (timer.monotonicMs() - started);
    if (left <= 0) {
      // A claim that never got its message (a test send's request died
      // between its two statements) is given up: nothing was sent or answered.
      if (await deps.store.idempotency.releaseAbandoned(scope, record.messageId)) return "released";
      // Another duplicate may have given the same claim up a moment earlier
      // (and may hold the key anew): look again before answering unresolved.
      const again = await deps.store.idempotency.find(scope, deps.clock.now());
      if (again === null || again.messageId !== claim || again.responseBody !== null) {
        record = again;
        continue;
      }
      return {
        ok: false,
        code: "first_request_unresolved",
        retryAfterMs: deps.config.unresolvedRetryAfterMs,
      };
    }
    await timer.sleep(Math.min(pause, left));
    record = await deps.store.idempotency.find(scope, deps.clock.now());
  }
}

/** 2. Submit: the provider's answer; an adapter that throws counts as no definitive answer. */
async function submit(draft: Draft, logger: Logger): Promise<SubmitOutcome> {
  const { provider, queued } = draft;
  if (!provider) return { kind: "unreachable", reason: "no live provider is configured" };
  try {
    return await provider.submit({
      messageId: queued.messageId,
      to: draft.to,
      text: draft.text,
      sender: draft.sender,
    });
  } catch (error) {
    logger.error(
      { message_id: queued.messageId, err: error },
      "provider adapter threw; treating the outcome as unknown",
    );
    return { kind: "indeterminate", reason: "provider adapter failed" };
  }
}

/**
 * Runs a statement that must not be lost after the provider was contacted
 * (or after the key was claimed), again and again with backoff while the
 * database is unavailable, for at most `recordRetryMs`; then the error stands.
 */
async function persist<T>(
  deps: SendMessageDeps,
  logger: Logger,
  what: "record" | "release",
  work: () => Promise<T>,
): Promise<T> {
  const timer = deps.timer ?? systemTimer;
  const started = timer.monotonicMs();
  for (let attempt = 1, pause = 100; ; attempt++, pause = Math.min(pause * 2, 2_000)) {
    try {
      const done = await work();
      if (attempt > 1)
        logger.info({ attempts: attempt, step: what }, "recorded after the database came back");
      return done;
    } catch (error) {
      const left = deps.config.recordRetryMs - (timer.monotonicMs() - started);
      if (!isDatabaseUnavailable(error) || left <= 0) throw error;
      logger.warn(
        { attempt, step: what, retry_in_ms: Math.min(pause, left) },
        "the database is unavailable; retrying to record the send",
      );
      await timer.sleep(Math.min(pause, left));
    }
  }
}

/** 3. Record the provider's answer (or release the key when it was not reached). */
function record(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
  outcome: SubmitOutcome,
  written: Claimed,
): Promise<SendMessageResult> {
  const step = input.mode === "test" ? recordTest : recordLive;
  return step(deps, input, draft, outcome, written);
}

/** 3, live keys: the queued message moves on; a send that sent nothing gives back what it took. */
async function recordLive(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
  outcome: SubmitOutcome,
  written: Claimed,
): Promise<SendMessageResult> {
  const { queued } = draft;
  const { messageId, idempotencyId } = queued;
  const later = deps.clock.now();
  const projectId = input.project.id;
  const log = input.logger;
  /**
   * A send that sent nothing gives back what it took: free-tier segments and
   * credits, in the order the write-ahead took them (counter rows before the
   * project row), so the two can never deadlock.
   */
  const giveBack = async (tx: SendMessageTx, note: string) => {
    if (written.freeTierSegments > 0) {
      const { start } = windowOf("utc_day", queued.now);
      await tx.limits.release(BUCKETS.freeTierSegments(projectId), start, written.freeTierSegments);
    }
    if (queued.creditsReserved > 0) {
      await tx.ledger.refund({ projectId, messageId, amount: queued.creditsReserved, note, now: later });
    }
  };
  const tookSomething = queued.creditsReserved > 0 || written.freeTierSegments > 0;

  if (outcome.kind === "unreachable") {
    log.warn(
      { message_id: messageId, provider: draft.provider?.name ?? "none", reason: outcome.reason },
      "provider unreachable",
    );
    const released = await persist(deps, log, "release", () =>
      tookSomething
        ? deps.store.transaction(async (tx) => {
            const done = await tx.messages.releaseUnsent({ messageId, idempotencyId });
            if (done) await giveBack(tx, "provider unreachable");
            return done;
          })
        : deps.store.messages.releaseUnsent({ messageId, idempotencyId }),
    );
    if (released) return { ok: false, code: "provider_unavailable" };
    return storedAnswer(deps, messageId, log, written.rateLimit);
  }

  const recorded = outcomeOf(outcome, later, 0);
  const response = answerOf(queued, recorded, later);
  const change = { messageId, idempotencyId, outcome: recorded, response, now: later };
  const moved = await persist(deps, log, "record", () =>
    recorded.status === "failed" && tookSomething
      ? deps.store.transaction(async (tx) => {
          const done = await tx.messages.recordOutcome(change);
          // A rejection sent nothing: the credits and the free-tier segments go back.
          if (done) await giveBack(tx, "rejected");
          return done;
        })
      : deps.store.messages.recordOutcome(change),
  );
  if (!moved) return storedAnswer(deps, messageId, log, written.rateLimit);
  return newAnswer(deps, queued, response, written);
}

/**
 * 3, test keys: the message is written once, answered, with the key's answer.
 * Not reached: the claim is given back. The claim gone meanwhile (a duplicate
 * waited for it in vain and took the key over): nothing is written, and the
 * caller is told to retry with the same key.
 */
async function recordTest(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
  outcome: SubmitOutcome,
  written: Claimed,
): Promise<SendMessageResult> {
  const { queued } = draft;
  const log = input.logger;
  if (outcome.kind === "unreachable") {
    log.warn(
      { message_id: queued.messageId, provider: draft.provider?.name ?? "none", reason: outcome.reason },
      "provider unreachable",
    );
    await persist(deps, log, "release", () => deps.store.idempotency.releaseClaim(queued.idempotencyId));
    return { ok: false, code: "provider_unavailable" };
  }
  const later = deps.clock.now();
  const recorded = outcomeOf(outcome, later, deps.config.simulatorDelayMs);
  const response = answerOf(queued, recorded, later);
  const stored = await persist(deps, log, "record", () =>
    deps.store.messages.insertAnswered(queued, { outcome: recorded, response, now: later }),
  );
  if (!stored) {
    log.warn({ message_id: queued.messageId }, "the key's claim was given up while the send was in flight");
    return { ok: false, code: "first_request_unresolved", retryAfterMs: 1_000 };
  }
  return newAnswer(deps, queued, response, written);
}

/** A new send's answer (201), remembered for this instance's replays. */
function newAnswer(
  deps: SendMessageDeps,
  queued: QueuedMessage,
  response: MessageResource,
  written: Claimed,
): SendMessageResult {
  const { fingerprint, expiresAt } = queued;
  deps.answered?.remember(queued.scope, { fingerprint, expiresAt, responseBody: response });
  return { ok: true, replayed: false, message: response, rateLimit: written.rateLimit };
}

/** The Message resource a send answers. */
function answerOf(queued: QueuedMessage, recorded: Outcome, now: Date): MessageResource {
  return toMessageResource({
    id: queued.messageId,
    recipientMasked: queued.recipientMasked,
    status: recorded.status,
    segments: queued.segments,
    errorCode: recorded.error?.errorCode ?? null,
    errorMessage: recorded.error?.errorMessage ?? null,
    createdAt: queued.now,
    updatedAt: now,
  });
}

/** What a definitive (or indeterminate) provider answer makes of the message. */
function outcomeOf(
  outcome: Exclude<SubmitOutcome, { kind: "unreachable" }>,
  now: Date,
  firstCheckDelayMs: number,
): Outcome {
  switch (outcome.kind) {
    case "accepted":
      return {
        status: "submitted",
        error: null,
        providerRef: outcome.providerRef,
        nextCheckAt: new Date(now.getTime() + firstCheckDelayMs),
      };
    case "rejected":
      return { status: "failed", error: messageError(outcome.code), providerRef: null, nextCheckAt: null };
    case "indeterminate":
      return {
        status: "unknown",
        error: messageError("provider_unavailable"),
        providerRef: null,
        nextCheckAt: null,
      };
  }
}

/** The recovery sweep decided first (the provider took very long): its answer stands. */
async function storedAnswer(
  deps: SendMessageDeps,
  messageId: string,
  logger: Logger,
  rateLimit: LimitState,
): Promise<SendMessageResult> {
  // The recovery sweep, or an earlier attempt of this very statement whose
  // answer the database connection lost: either way the stored state stands.
  logger.warn({ message_id: messageId }, "the message had already left queued; answering its stored state");
  const state = await deps.store.messages.read(messageId);
  if (!state) throw new Error("a message vanished while its send was in flight");
  return { ok: true, replayed: false, message: toMessageResource(state), rateLimit };
}
