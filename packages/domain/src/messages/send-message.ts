// POST /v1/messages (spec 4.2): validate, record and submit one message, in
// four named steps:
//
//   1. admit         one statement: an unexpired idempotency record answers
//                    (replay or 409); otherwise the per-minute limit counts it.
//   2. write ahead   the queued message and the in-flight idempotency record
//                    in one statement (live: plus the free-tier allowance and
//                    the credit reservation, in one transaction), committed
//                    before the provider is contacted.
//   3. submit        only the simulator ever sees a test key's message.
//   4. record        one statement moves the message out of `queued` and
//                    stores the answer for replays. Provider not reached: the
//                    message and the key are released (503, retry is safe).
//
// A crash between 2 and 4 leaves a queued message that the recovery sweep
// turns into `unknown` (never re-sent).
import { type Keyring, newId } from "@sms/crypto";
import { DEFAULT_LOCALE, type Locale, renderMessage, type TemplateId } from "@sms/templates";
import { consumeEach } from "../limits/consume-limits.ts";
import { canonicalRequest, IDEMPOTENCY_TTL_MS, type IdempotencyScope } from "../model/idempotency.ts";
import type { AuthenticatedProject, KeyMode } from "../model/keys.ts";
import { BUCKETS, type LimitState, limitState, windowOf } from "../model/limits.ts";
import { type MessageResource, messageError, toMessageResource } from "../model/message.ts";
import { maskRecipient } from "../model/recipient.ts";
import type { Clock, Logger } from "../ports.ts";
import type { SmsProvider, SubmitOutcome } from "../provider.ts";
import {
  type IdempotencyStore,
  type LedgerStore,
  type LimitStore,
  type MessageStore,
  type Outcome,
  type PriorRecord,
  type ProjectStore,
  type QueuedMessage,
  transactionOrRollback,
} from "../store/index.ts";

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
  idempotency: Pick<IdempotencyStore, "admit" | "find">;
  messages: Pick<MessageStore, "insertQueued" | "recordOutcome" | "releaseUnsent" | "read">;
  transaction<T>(work: (tx: SendMessageTx) => Promise<T>): Promise<T>;
};

export type SendMessageDeps = {
  store: SendMessageStore;
  keyring: Keyring;
  clock: Clock;
  providers: { test: SmsProvider; live: SmsProvider | null };
  config: {
    messagesPerMinute: number;
    freeTierDailySegments: number;
    defaultSender: string;
    /** When a test message's first status check is due, after submission. */
    simulatorDelayMs: number;
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
  /** The key's first answer, unchanged (200). */
  | { ok: true; replayed: true; message: MessageResource }
  /** The templates package's verdict; `detail` is its caller-facing sentence naming the variable. */
  | { ok: false; code: "invalid_template" | "invalid_variables"; detail: string }
  /** The key belongs to another request, or its first request has not finished (`inFlight`). */
  | { ok: false; code: "idempotency_key_reused"; inFlight: boolean }
  /** Per-minute limit, or the free tier's daily segments: nothing sent. */
  | { ok: false; code: "rate_limited" | "daily_limit_reached"; limit: LimitState }
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
  fingerprintInput: string;
};

export async function sendMessage(
  deps: SendMessageDeps,
  input: SendMessageInput,
): Promise<SendMessageResult> {
  const { request } = input;
  const locale = request.locale ?? DEFAULT_LOCALE;
  const rendered = renderMessage({ template: request.template, variables: request.variables, locale });
  if (!rendered.ok) return { ok: false, code: rendered.code, detail: rendered.message };

  const fingerprintInput = canonicalRequest(request, locale);
  const now = deps.clock.now();
  const scope: IdempotencyScope = {
    projectId: input.project.id,
    mode: input.mode,
    key: input.idempotencyKey,
  };

  const admitted = await admit(deps, scope, fingerprintInput, now);
  if ("ok" in admitted) return admitted;

  const draft = await prepare(deps, input, { scope, now, locale, fingerprintInput, rendered });
  const written = await writeAhead(deps, input.mode, draft);
  if ("ok" in written) return written;

  const outcome = await submit(draft, input.logger);
  return record(deps, input, draft, outcome, { ...written, rateLimit: admitted.rateLimit });
}

/** 1. Admit: an earlier request with this key answers; otherwise the per-minute limit counts this one. */
async function admit(
  deps: SendMessageDeps,
  scope: IdempotencyScope,
  fingerprintInput: string,
  now: Date,
): Promise<SendMessageResult | { rateLimit: LimitState }> {
  const limit = deps.config.messagesPerMinute;
  const window = windowOf("minute", now);
  const admission = await deps.store.idempotency.admit({
    scope,
    now,
    bucket: BUCKETS.messages(scope.projectId),
    window,
    limit,
  });
  if (admission.prior) return answerFromPrior(deps.keyring, admission.prior, fingerprintInput);
  const state = limitState({ limit, window: "minute" }, admission.used ?? limit, window.end);
  if (admission.used === null) return { ok: false, code: "rate_limited", limit: state };
  return { rateLimit: state };
}

async function answerFromPrior(
  keyring: Keyring,
  prior: PriorRecord,
  fingerprintInput: string,
): Promise<SendMessageResult> {
  if (!(await keyring.verifyFingerprint(fingerprintInput, prior.fingerprint))) {
    return { ok: false, code: "idempotency_key_reused", inFlight: false };
  }
  if (prior.responseBody === null) return { ok: false, code: "idempotency_key_reused", inFlight: true };
  return { ok: true, replayed: true, message: prior.responseBody };
}

/** The message as it will be written: ids, ciphertexts, sender, provider. */
async function prepare(
  deps: SendMessageDeps,
  input: SendMessageInput,
  facts: {
    scope: IdempotencyScope;
    now: Date;
    locale: Locale;
    fingerprintInput: string;
    rendered: { template: TemplateId; text: string; segments: number; encoding: string };
  },
): Promise<Draft> {
  const { keyring } = deps;
  const { scope, now, rendered } = facts;
  const messageId = newId("msg");
  const sender = {
    name: input.project.sender ?? deps.config.defaultSender,
    brandId: input.project.senderBrandId,
  };
  const provider = input.mode === "test" ? deps.providers.test : deps.providers.live;
  const [fingerprint, textCiphertext, recipientCiphertext] = await Promise.all([
    keyring.fingerprint(facts.fingerprintInput),
    keyring.encrypt(rendered.text, messageId),
    keyring.encrypt(input.request.to, messageId),
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
      creditsReserved: input.mode === "live" ? rendered.segments : 0,
      now,
    },
    to: input.request.to,
    text: rendered.text,
    sender,
    provider,
    fingerprintInput: facts.fingerprintInput,
  };
}

/**
 * 2. Write ahead, committed before the provider is contacted. Returns the
 * free-tier segments this send took (live sends of projects without paid
 * credits), or the answer when it may not go ahead.
 */
async function writeAhead(
  deps: SendMessageDeps,
  mode: KeyMode,
  draft: Draft,
): Promise<SendMessageResult | { freeTierSegments: number }> {
  const { queued } = draft;
  const written =
    mode === "test"
      ? (await deps.store.messages.insertQueued(queued))
        ? { freeTierSegments: 0 }
        : null
      : await writeAheadLive(deps, queued);
  if (written === null) {
    // Another request with this key won the race: answer as it stands now.
    const winner = await deps.store.idempotency.find(queued.scope, queued.now);
    if (!winner) return { ok: false, code: "idempotency_key_reused", inFlight: true };
    return answerFromPrior(deps.keyring, winner, draft.fingerprintInput);
  }
  return written;
}

/**
 * Live write-ahead, one transaction: the key and the queued message first (a
 * lost race ends here, nothing else taken), then the free-tier allowance
 * (projects without paid credits) and the credit reservation. A refusal
 * rolls everything back. null: the race was lost.
 */
function writeAheadLive(
  deps: SendMessageDeps,
  queued: QueuedMessage,
): Promise<{ freeTierSegments: number } | Refusal | null> {
  const projectId = queued.scope.projectId;
  return transactionOrRollback<{ freeTierSegments: number } | null, Refusal, SendMessageTx>(
    deps.store,
    async (tx, rollback) => {
      if (!(await tx.messages.insertQueued(queued))) return null;
      let freeTierSegments = 0;
      if (!(await tx.projects.hasPaidCredits(projectId))) {
        const taken = await consumeEach(
          tx.limits,
          [
            {
              bucket: BUCKETS.freeTierSegments(projectId),
              window: "utc_day",
              limit: deps.config.freeTierDailySegments,
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
      return { freeTierSegments };
    },
  );
}

/** 3. Submit: the provider's answer; an adapter that throws counts as no definitive answer. */
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

/** 4. Record the provider's answer (or release the key when it was not reached). */
async function record(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
  outcome: SubmitOutcome,
  written: { freeTierSegments: number; rateLimit: LimitState },
): Promise<SendMessageResult> {
  const { queued } = draft;
  const { messageId, idempotencyId } = queued;
  const later = deps.clock.now();
  const projectId = input.project.id;
  /** A send that sent nothing gives back what it took: credits and free-tier segments. */
  const giveBack = async (tx: SendMessageTx, note: string) => {
    if (queued.creditsReserved > 0) {
      await tx.ledger.refund({ projectId, messageId, amount: queued.creditsReserved, note, now: later });
    }
    if (written.freeTierSegments > 0) {
      const { start } = windowOf("utc_day", queued.now);
      await tx.limits.release(BUCKETS.freeTierSegments(projectId), start, written.freeTierSegments);
    }
  };
  const tookSomething = queued.creditsReserved > 0 || written.freeTierSegments > 0;

  if (outcome.kind === "unreachable") {
    input.logger.warn(
      { message_id: messageId, provider: draft.provider?.name ?? "none", reason: outcome.reason },
      "provider unreachable",
    );
    const released = tookSomething
      ? await deps.store.transaction(async (tx) => {
          const done = await tx.messages.releaseUnsent({ messageId, idempotencyId });
          if (done) await giveBack(tx, "provider unreachable");
          return done;
        })
      : await deps.store.messages.releaseUnsent({ messageId, idempotencyId });
    if (released) return { ok: false, code: "provider_unavailable" };
    return storedAnswer(deps, messageId, input.logger, written.rateLimit);
  }

  const recorded = outcomeOf(outcome, later, input.mode === "test" ? deps.config.simulatorDelayMs : 0);
  const response = toMessageResource({
    id: messageId,
    recipientMasked: queued.recipientMasked,
    status: recorded.status,
    segments: queued.segments,
    errorCode: recorded.error?.errorCode ?? null,
    errorMessage: recorded.error?.errorMessage ?? null,
    createdAt: queued.now,
    updatedAt: later,
  });
  const change = { messageId, idempotencyId, outcome: recorded, response, now: later };
  const moved =
    recorded.status === "failed" && tookSomething
      ? await deps.store.transaction(async (tx) => {
          const done = await tx.messages.recordOutcome(change);
          // A rejection sent nothing: the credits and the free-tier segments go back.
          if (done) await giveBack(tx, "rejected");
          return done;
        })
      : await deps.store.messages.recordOutcome(change);
  if (!moved) return storedAnswer(deps, messageId, input.logger, written.rateLimit);
  return { ok: true, replayed: false, message: response, rateLimit: written.rateLimit };
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
  logger.warn({ message_id: messageId }, "the message left queued before its provider outcome was recorded");
  const state = await deps.store.messages.read(messageId);
  if (!state) throw new Error("a message vanished while its send was in flight");
  return { ok: true, replayed: false, message: toMessageResource(state), rateLimit };
}
