// POST /v1/verifications (issue 22): draw a code, send it through the message
// path (sendMessage: the same rendering, segments, credits, free tier,
// limits, simulator, uBill, write-ahead and exactly-once idempotency), and
// answer the Verification.
//
//   1. live keys: the recipient's start limits (anti-pumping), counted only
//      for a key never used before (a replay or a 409 is never refused
//      here, nor counted); given back when nothing was sent.
//   2. the code: the same one again when the number has a pending
//      verification of the same template within its lifetime (a resend, issue
//      53: the new verification carries on its code, its attempts left and
//      its expires_at, so a late first SMS still approves and a resend never
//      adds attempts); else zeros for test keys, else from the CSPRNG.
//   3. sendMessage with the start's identity as the key's fingerprint input;
//      once it has claimed the key, before uBill or the simulator sees the
//      SMS, the verification's row is written (unconfirmed) with the code's
//      keyed hash and its ciphertext (beforeSubmit). A start that sent
//      nothing removes its row; one killed before its message was written
//      leaves it unconfirmed for the recovery sweep (sweep-unconfirmed.ts).
//   4. a new start: its row is confirmed; a failed send makes it
//      `send_failed`; a pending one cancels the number's earlier pending
//      verifications (same project and key mode) and keeps the fewest
//      attempts of the code it carried on. A replay answers the first answer
//      again, built from the row.

import type { Keyring } from "@sms/crypto";
import { DecryptError, newId } from "@sms/crypto";
import type { Locale } from "@sms/templates";
import { consumeLimits, type LimitRefusal } from "../limits/consume-limits.ts";
import type { SendMessageInput, SendMessageResult } from "../messages/send/send-message.ts";
import type { IdempotencyScope } from "../model/idempotency.ts";
import type { AuthenticatedProject, KeyMode } from "../model/keys.ts";
import {
  BUCKETS,
  type LimitCheck,
  type LimitState,
  type RecipientAllowance,
  recipientFingerprintInput,
  windowOf,
} from "../model/limits.ts";
import type { MessageResource } from "../model/message.ts";
import { maskRecipient } from "../model/recipient.ts";
import {
  canonicalVerificationRequest,
  codeHashInput,
  drawCode,
  testModeCode,
  toVerificationResource,
  VERIFICATION_MAX_ATTEMPTS,
  type VerificationResource,
  type VerificationState,
  type VerificationTemplate,
} from "../model/verification.ts";
import type { Clock, Logger } from "../ports.ts";
import type { IdempotencyStore, Store, VerificationStore } from "../store/index.ts";

export type StartVerificationRequest = {
  to: string;
  template: VerificationTemplate;
  locale: Locale;
  codeLength: number;
};

export type StartVerificationDeps = {
  store: Pick<Store, "transaction" | "limits"> & {
    verifications: Pick<VerificationStore, "insert" | "readByMessage" | "deleteUnsent" | "findResendable">;
    idempotency: Pick<IdempotencyStore, "find">;
  };
  keyring: Keyring;
  clock: Clock;
  /** The message path (sendMessage bound to its dependencies). */
  send: (input: SendMessageInput) => Promise<SendMessageResult>;
  config: {
    /** How long a verification stays pending (default 10 minutes). */
    lifetimeMs: number;
    /** Live keys: starts per project and recipient, per minute and per UTC day. */
    startsPerRecipient: { perMinute: number; perDay: number };
  };
  /** The code source (default: the CSPRNG; test keys always get zeros). */
  drawCode?: (length: number) => string;
};

export type StartVerificationInput = {
  project: AuthenticatedProject;
  mode: KeyMode;
  keyId: string;
  idempotencyKey: string;
  request: StartVerificationRequest;
  logger: Logger;
};

export type StartVerificationResult =
  /** A new start (201); `replaced`: the number's pending verifications it canceled. */
  | {
      ok: true;
      replayed: false;
      verification: VerificationResource;
      rateLimit: LimitState;
      replaced: number;
      /** Test keys: what a live key would have left for this number (its SMS counted with messages). */
      recipient?: RecipientAllowance;
    }
  | { ok: true; replayed: true; verification: VerificationResource }
  /** The recipient's start limits (live keys): nothing sent. */
  | (LimitRefusal & { subject: "verification_recipient" })
  /** The message path's refusal, as it is. */
  | Exclude<SendMessageResult, { ok: true }>;

export async function startVerification(
  deps: StartVerificationDeps,
  input: StartVerificationInput,
): Promise<StartVerificationResult> {
  const { request, project, mode } = input;
  const now = deps.clock.now();
  const scope: IdempotencyScope = { projectId: project.id, mode, key: input.idempotencyKey };
  const recipient = await deps.keyring.fingerprint(recipientFingerprintInput(project.id, request.to));

  // 1. Anti-pumping, for a key not seen before.
  const counted = mode === "live" ? await countStart(deps, scope, recipient, now) : [];
  if (!Array.isArray(counted)) return counted;

  // 2. The code: a resend's again, or a new one.
  const carried = await resendable(deps, input, recipient, now);
  const code =
    carried?.code ??
    (mode === "test" ? testModeCode(request.codeLength) : (deps.drawCode ?? drawCode)(request.codeLength));
  const id = newId("vrf");
  let written = false;
  const variables: Record<string, string> = { code };
  if (request.template === "password_reset_code") {
    const minutes = carried
      ? Math.floor((carried.expiresAt.getTime() - now.getTime()) / 60_000)
      : Math.round(deps.config.lifetimeMs / 60_000);
    variables.minutes = String(Math.max(1, minutes));
  }

  // 3. The SMS, through the message path; the row before the provider sees it.
  const result = await deps.send({
    project,
    mode,
    keyId: input.keyId,
    idempotencyKey: input.idempotencyKey,
    request: { to: request.to, template: request.template, variables, locale: request.locale },
    logger: input.logger,
    identity: canonicalVerificationRequest(request),
    beforeSubmit: async (messageId) => {
      const at = deps.clock.now();
      written = await deps.store.verifications.insert({
        id,
        projectId: project.id,
        mode,
        messageId,
        recipientMasked: maskRecipient(request.to),
        recipientFingerprint: recipient,
        template: request.template,
        locale: request.locale,
        codeHash: await deps.keyring.fingerprint(codeHashInput(id, code)),
        codeCiphertext: await deps.keyring.encrypt(code, id),
        status: "pending",
        attemptsRemaining: carried?.attemptsRemaining ?? VERIFICATION_MAX_ATTEMPTS,
        expiresAt: carried?.expiresAt ?? new Date(at.getTime() + deps.config.lifetimeMs),
        unconfirmed: true,
        now: at,
      });
    },
  });

  if (!result.ok) {
    if (written) await deps.store.verifications.deleteUnsent(id);
    if (counted.length > 0) await giveBack(deps, counted, now);
    return result;
  }

  // 4. The answer.
  const sendFailed = result.message.status === "failed";
  let state = await verificationOf(deps, input, result.message, recipient);
  let replaced = 0;
  if (!result.replayed && state.id === id) {
    const settled = await deps.store.transaction((tx) =>
      tx.verifications.settle({
        id,
        projectId: project.id,
        mode,
        recipientFingerprint: recipient,
        template: request.template,
        sendFailed,
        carriedFrom: carried?.id ?? null,
        now: deps.clock.now(),
      }),
    );
    replaced = settled.canceled;
    if (settled.attemptsAtStart !== null) state = { ...state, attemptsAtStart: settled.attemptsAtStart };
  }
  const verification = firstAnswer(state, sendFailed);
  if (result.replayed) return { ok: true, replayed: true, verification };
  const { rateLimit, recipient: allowance } = result;
  return allowance
    ? { ok: true, replayed: false, verification, rateLimit, replaced, recipient: allowance }
    : { ok: true, replayed: false, verification, rateLimit, replaced };
}

/**
 * The row of the message the key sent. Missing only when a start crashed
 * after its key was claimed and before its row was written: then no code was
 * ever sent, and the verification is recorded as `send_failed` (it can never
 * be approved: it has no code hash).
 */
async function verificationOf(
  deps: StartVerificationDeps,
  input: StartVerificationInput,
  message: MessageResource,
  recipient: string,
): Promise<VerificationState> {
  const { verifications } = deps.store;
  const found = await verifications.readByMessage(message.id, input.project.id);
  if (found) return found;
  const at = deps.clock.now();
  await verifications.insert({
    id: newId("vrf"),
    projectId: input.project.id,
    mode: input.mode,
    messageId: message.id,
    recipientMasked: message.to,
    recipientFingerprint: recipient,
    template: input.request.template,
    locale: input.request.locale,
    codeHash: null,
    codeCiphertext: null,
    status: "send_failed",
    attemptsRemaining: VERIFICATION_MAX_ATTEMPTS,
    expiresAt: new Date(at.getTime() + deps.config.lifetimeMs),
    unconfirmed: false,
    now: at,
  });
  const recorded = await verifications.readByMessage(message.id, input.project.id);
  if (!recorded) throw new Error("a verification vanished while it was being answered");
  return recorded;
}

/**
 * The start's answer, the same on the first request and on every replay: the
 * row as it was written (pending with its attempts at the start, or
 * send_failed when the SMS failed), whatever happened to it since.
 */
function firstAnswer(state: VerificationState, sendFailed: boolean): VerificationResource {
  const first: VerificationState = {
    ...state,
    status: sendFailed || state.status === "send_failed" ? "send_failed" : "pending",
    attemptsRemaining: state.attemptsAtStart,
    approvedAt: null,
    updatedAt: state.createdAt,
  };
  return toVerificationResource(first, state.createdAt);
}

/** The code a resend carries on, with the verification it comes from. */
type Carried = { id: string; code: string; attemptsRemaining: number; expiresAt: Date };

/**
 * A resend (issue 53): the number's pending verification of the same
 * template, within its lifetime and with attempts left, whose code is still
 * held and as long as the one asked for. Its code is decrypted to be sent
 * again; one that cannot be decrypted (its key retired since) is no resend:
 * a new code is drawn.
 */
async function resendable(
  deps: StartVerificationDeps,
  input: StartVerificationInput,
  recipient: string,
  now: Date,
): Promise<Carried | null> {
  const found = await deps.store.verifications.findResendable({
    projectId: input.project.id,
    mode: input.mode,
    recipientFingerprint: recipient,
    template: input.request.template,
    now,
  });
  if (!found) return null;
  let code: string;
  try {
    code = await deps.keyring.decrypt(found.codeCiphertext, found.id);
  } catch (error) {
    if (error instanceof DecryptError) return null;
    throw error;
  }
  if (code.length !== input.request.codeLength) return null;
  return { id: found.id, code, attemptsRemaining: found.attemptsRemaining, expiresAt: found.expiresAt };
}

type Counted = LimitCheck[];

/**
 * Live keys: the recipient's starts this minute and this UTC day. A key
 * already on record is a replay or a reuse (409): the message path answers
 * it, and it is neither counted nor refused here.
 */
async function countStart(
  deps: StartVerificationDeps,
  scope: IdempotencyScope,
  recipient: string,
  now: Date,
): Promise<Counted | StartVerificationResult> {
  if (await deps.store.idempotency.find(scope, now)) return [];
  const { perMinute, perDay } = deps.config.startsPerRecipient;
  const checks: LimitCheck[] = [
    {
      bucket: BUCKETS.verificationStartsMinute(scope.projectId, recipient),
      window: "minute",
      limit: perMinute,
      refusal: "rate_limited",
    },
    {
      bucket: BUCKETS.verificationStartsDay(scope.projectId, recipient),
      window: "utc_day",
      limit: perDay,
      refusal: "daily_limit_reached",
    },
  ];
  const outcome = await consumeLimits(deps.store, checks, now);
  if (!outcome.ok) return { ...outcome, subject: "verification_recipient" };
  return checks;
}

/** Nothing was sent: the start is not counted after all. */
async function giveBack(deps: StartVerificationDeps, checks: Counted, now: Date): Promise<void> {
  for (const check of checks) {
    await deps.store.limits.release(check.bucket, windowOf(check.window, now).start, 1);
  }
}
