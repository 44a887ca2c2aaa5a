// POST /v1/messages (spec 4.2): validate, record, submit one message.
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
import type { PrismaClient } from "@sms/db";
import { DEFAULT_LOCALE, type Locale, renderMessage } from "@sms/templates";
import type { AuthenticatedProject, KeyMode } from "../auth/authenticate-api-key.ts";
import { freeTierBucket as freeTierBucketOf } from "../credits/project-balance.ts";
import type { ApiErrorCode } from "../errors.ts";
import type { Clock, Logger } from "../ports.ts";
import type { SmsProvider, SubmitOutcome } from "../provider.ts";
import { type LimitState, LimitRefusal, consumeLimitsOrThrow } from "../rate-limits/consume-limits.ts";
import { formatTimestamp } from "../time.ts";
import { type MessageResource, maskRecipient, messageError, toMessageResource } from "./message-resource.ts";
import {
  IDEMPOTENCY_TTL_MS,
  type Outcome,
  type PriorRecord,
  type QueuedMessage,
  type Sql,
  admitSend,
  findIdempotencyRecord,
  insertQueuedMessage,
  prismaSql,
  readMessageRow,
  recordOutcome,
  refund,
  releaseFreeTierSegments,
  releaseUnsentMessage,
  reserveCredits,
} from "./message-store.ts";

export { IDEMPOTENCY_TTL_MS, refund } from "./message-store.ts";

export type SendMessageRequest = {
  to: string;
  template: string;
  variables: unknown;
  locale?: Locale;
};

export type SendMessageDeps = {
  prisma: PrismaClient;
  /** The hot-path statements' runner (the database's pooled query); Prisma's raw queries when absent. */
  sql?: Sql;
  keyring: Keyring;
  clock: Clock;
  logger: Logger;
  providers: { test: SmsProvider; live: SmsProvider | null };
  config: {
    messagesPerMinute: number;
    freeTierDailySegments: number;
    defaultSender: string;
    /** When a test message's first status check is due, after submission. */
    simulatorDelayMs: number;
  };
};

export type SendMessageResult =
  | { kind: "created"; message: MessageResource; rateLimit?: LimitState }
  | { kind: "replayed"; message: MessageResource }
  | { kind: "refused"; code: ApiErrorCode; message: string; limit?: LimitState };

const REFUSALS = {
  reused: "This Idempotency-Key was already used with a different request. Use a new key for a new message.",
  inFlight: "A request with this Idempotency-Key is still in progress. Retry shortly with the same key.",
  credits:
    "This project has too few credits for this message; nothing was sent. Add credits on the dashboard.",
  unavailable:
    "The SMS provider could not be reached; nothing was sent. Retry with the same Idempotency-Key.",
  rateLimited:
    "Too many messages this minute; nothing was sent. Retry shortly with the same Idempotency-Key.",
} as const;

/** The request's identity for idempotency (hashed with a keyed HMAC, never stored plain). */
export function canonicalRequest(request: SendMessageRequest, locale: Locale): string {
  const variables =
    request.variables && typeof request.variables === "object"
      ? Object.entries(request.variables as Record<string, unknown>).sort(([a], [b]) =>
          a < b ? -1 : a > b ? 1 : 0,
        )
      : request.variables;
  return JSON.stringify([request.to, request.template, variables, locale]);
}

async function answerFromPrior(
  prior: PriorRecord,
  fingerprintInput: string,
  keyring: Keyring,
): Promise<SendMessageResult> {
  if (!(await keyring.verifyFingerprint(fingerprintInput, prior.fingerprint))) {
    return { kind: "refused", code: "idempotency_key_reused", message: REFUSALS.reused };
  }
  if (prior.responseBody === null)
    return { kind: "refused", code: "idempotency_key_reused", message: REFUSALS.inFlight };
  return { kind: "replayed", message: prior.responseBody };
}

type WriteAhead = "written" | "concurrent" | { refused: SendMessageResult & { kind: "refused" } };

export async function sendMessage(options: {
  deps: SendMessageDeps;
  project: AuthenticatedProject;
  mode: KeyMode;
  keyId: string;
  idempotencyKey: string;
  request: SendMessageRequest;
}): Promise<SendMessageResult> {
  const { deps, project, mode, idempotencyKey, request } = options;
  const { prisma, keyring } = deps;
  const sql = deps.sql ?? prismaSql(prisma);
  const locale = request.locale ?? DEFAULT_LOCALE;

  const rendered = renderMessage({ template: request.template, variables: request.variables, locale });
  if (!rendered.ok) return { kind: "refused", code: rendered.code, message: rendered.message };

  const fingerprintInput = canonicalRequest(request, locale);
  const now = deps.clock.now();
  const scope = { projectId: project.id, mode, key: idempotencyKey };

  // 1. An earlier request with this key answers; otherwise the per-minute limit.
  const admission = await admitSend(sql, {
    scope,
    now,
    bucket: `messages:${project.id}`,
    limit: deps.config.messagesPerMinute,
  });
  if (admission.kind === "prior") return answerFromPrior(admission.prior, fingerprintInput, keyring);
  if (admission.kind === "limited") {
    return { kind: "refused", code: "rate_limited", message: REFUSALS.rateLimited, limit: admission.state };
  }

  // 2. Write ahead.
  const messageId = newId("msg");
  const idempotencyId = newId("idem");
  const credits = mode === "live" ? rendered.segments : 0;
  const sender = { name: project.sender ?? deps.config.defaultSender, brandId: project.senderBrandId };
  const provider = mode === "test" ? deps.providers.test : deps.providers.live;
  const [fingerprint, textCiphertext, recipientCiphertext] = await Promise.all([
    keyring.fingerprint(fingerprintInput),
    keyring.encrypt(rendered.text, messageId),
    keyring.encrypt(request.to, messageId),
  ]);
  const queued: QueuedMessage = {
    messageId,
    idempotencyId,
    scope,
    fingerprint,
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
    apiKeyId: options.keyId,
    recipientMasked: maskRecipient(request.to),
    recipientCiphertext,
    textCiphertext,
    template: rendered.template,
    locale,
    sender: sender.name,
    segments: rendered.segments,
    encoding: rendered.encoding,
    provider: provider?.name ?? "ubill",
    creditsReserved: credits,
    now,
  };
  // Live sends of a project without paid credits draw on the free-tier allowance.
  const freeTier = {
    bucket: freeTierBucketOf(project.id),
    segments: rendered.segments,
    takenAt: now,
    taken: false,
  };

  let written: WriteAhead;
  if (mode === "test") {
    written = (await insertQueuedMessage(sql, queued)) ? "written" : "concurrent";
  } else {
    written = await writeAheadLive(deps, queued, freeTier);
  }
  if (typeof written === "object") return written.refused;
  if (written === "concurrent") {
    // Another request with this key won the race: answer as it stands now.
    const winner = await findIdempotencyRecord(sql, scope, now);
    if (!winner) return { kind: "refused", code: "idempotency_key_reused", message: REFUSALS.inFlight };
    return answerFromPrior(winner, fingerprintInput, keyring);
  }

  // 3. Submit.
  let outcome: SubmitOutcome;
  if (!provider) {
    outcome = { kind: "unreachable", reason: "no live provider is configured" };
  } else {
    try {
      outcome = await provider.submit({ messageId, to: request.to, text: rendered.text, sender });
    } catch (error) {
      deps.logger.error(
        { message_id: messageId, err: error },
        "provider adapter threw; treating the outcome as unknown",
      );
      outcome = { kind: "indeterminate", reason: "provider adapter failed" };
    }
  }

  // 4. Record the outcome.
  const later = deps.clock.now();
  const giveBack = async (db: Sql, note: string) => {
    if (credits > 0) await refund(db, project.id, messageId, credits, later, note);
    if (freeTier.taken) await releaseFreeTierSegments(db, freeTier);
  };

  if (outcome.kind === "unreachable") {
    deps.logger.warn(
      { message_id: messageId, provider: provider?.name ?? "none", reason: outcome.reason },
      "provider unreachable",
    );
    const released =
      mode === "test"
        ? await releaseUnsentMessage(sql, { messageId, idempotencyId })
        : await prisma.$transaction(async (tx) => {
            const done = await releaseUnsentMessage(prismaSql(tx), { messageId, idempotencyId });
            if (done) await giveBack(prismaSql(tx), "provider unreachable");
            return done;
          });
    if (released) return { kind: "refused", code: "provider_unavailable", message: REFUSALS.unavailable };
    return storedAnswer(sql, messageId, deps.logger);
  }

  const recorded: Outcome =
    outcome.kind === "accepted"
      ? {
          status: "submitted",
          errorCode: null,
          errorMessage: null,
          providerRef: outcome.providerRef,
          nextCheckAt: new Date(later.getTime() + (mode === "test" ? deps.config.simulatorDelayMs : 0)),
        }
      : outcome.kind === "rejected"
        ? { status: "failed", providerRef: null, nextCheckAt: null, ...messageError(outcome.code) }
        : {
            status: "unknown",
            providerRef: null,
            nextCheckAt: null,
            ...messageError("provider_unavailable"),
          };
  const response = toMessageResource({
    id: messageId,
    recipientMasked: queued.recipientMasked,
    status: recorded.status,
    segments: rendered.segments,
    errorCode: recorded.errorCode,
    errorMessage: recorded.errorMessage,
    createdAt: now,
    updatedAt: later,
  });
  const record = { messageId, idempotencyId, outcome: recorded, response, now: later };
  const moved =
    recorded.status === "failed" && mode === "live"
      ? await prisma.$transaction(async (tx) => {
          const done = await recordOutcome(prismaSql(tx), record);
          // A rejection sent nothing: the credits and the free-tier segments go back.
          if (done) await giveBack(prismaSql(tx), "rejected");
          return done;
        })
      : await recordOutcome(sql, record);
  if (!moved) return storedAnswer(sql, messageId, deps.logger);
  return { kind: "created", message: response, rateLimit: admission.state };
}

/**
 * Live write-ahead, one transaction: the key and the queued message first (a
 * lost race ends here, nothing else taken), then the free-tier allowance
 * (projects without paid credits) and the credit reservation. Any refusal
 * rolls everything back.
 */
async function writeAheadLive(
  deps: SendMessageDeps,
  queued: QueuedMessage,
  freeTier: { bucket: string; segments: number; takenAt: Date; taken: boolean },
): Promise<WriteAhead> {
  const { now } = queued;
  const projectId = queued.scope.projectId;
  try {
    return await deps.prisma.$transaction(async (tx) => {
      const txSql = prismaSql(tx);
      if (!(await insertQueuedMessage(txSql, queued))) return "concurrent" as const;
      const paid = await tx.$queryRaw<Array<{ has_paid_credits: boolean }>>`
        SELECT has_paid_credits FROM projects WHERE id = ${projectId}`;
      if (!paid[0]?.has_paid_credits) {
        await consumeLimitsOrThrow({
          tx,
          now,
          checks: [
            {
              bucket: freeTier.bucket,
              window: "utc_day",
              limit: deps.config.freeTierDailySegments,
              cost: freeTier.segments,
              refusal: "daily_limit_reached",
            },
          ],
        });
        freeTier.taken = true;
      }
      if (
        !(await reserveCredits(txSql, {
          projectId,
          messageId: queued.messageId,
          amount: queued.creditsReserved,
          now,
        }))
      ) {
        throw new InsufficientCredits();
      }
      return "written" as const;
    });
  } catch (error) {
    freeTier.taken = false;
    if (error instanceof InsufficientCredits) {
      return { refused: { kind: "refused", code: "insufficient_credits", message: REFUSALS.credits } };
    }
    if (error instanceof LimitRefusal) {
      const state = error.outcome.state;
      return {
        refused: {
          kind: "refused",
          code: "daily_limit_reached",
          message: `The free tier's ${deps.config.freeTierDailySegments} live segments for today are used up; nothing was sent. Do not retry before ${formatTimestamp(state.resetAt)} (midnight UTC), or add paid credits.`,
          limit: state,
        },
      };
    }
    throw error;
  }
}

/** The recovery sweep decided first (the provider took very long): its answer stands. */
async function storedAnswer(sql: Sql, messageId: string, logger: Logger): Promise<SendMessageResult> {
  logger.warn({ message_id: messageId }, "the message left queued before its provider outcome was recorded");
  const row = await readMessageRow(sql, messageId);
  if (!row) throw new Error("a message vanished while its send was in flight");
  return { kind: "created", message: toMessageResource(row) };
}

class InsufficientCredits extends Error {}
