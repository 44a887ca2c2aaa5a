// POST /v1/verifications/{id}/check (issue 22). One transaction: the row is
// locked, the code's keyed hash compared in constant time (the keyring's
// HMAC and timingSafeEqual), and the outcome written. The work does not
// depend on whether the code is right: every check hashes the code it was
// given (an unknown id against a stand-in hash), compares once and, for a
// pending verification, writes once. A check never costs credits.
//
//   pending, right code         → approved (one transition, whoever checks at once)
//   pending, wrong code         → one attempt fewer; the last one → max_attempts_reached
//   pending, lifetime passed    → expired (written down), refused as not pending
//   anything else               → refused as not pending, with its status, whatever the code
//
// Once a verification is no longer pending (approved, expired, canceled, out
// of attempts, its SMS failed), every check answers the same whatever the
// code: an approved verification checked again, with the right code or a
// wrong one, is refused as not pending. Before, the right code answered
// `approved` again until the code's hash was purged (7 days), so an
// integrator forwarding typed codes for a known id offered a right/wrong
// oracle and a replay (issue 53, M1). The status stays readable by GET.
//
// Checks are counted per project and per caller address in calendar minutes
// (the database's shared counters, as every limit): past either, `rate_limited`
// before anything is read or compared, and a check refused by one window is
// counted by neither.
import { isId } from "@sms/crypto";
import type { Keyring } from "@sms/crypto";
import {
  type CheckOutcomeStatus,
  codeHashInput,
  effectiveStatus,
  toVerificationResource,
  type VerificationResource,
  type VerificationStatus,
} from "../model/verification.ts";
import { type LimitRefusal, consumeEach } from "../limits/consume-limits.ts";
import { BUCKETS, type LimitCheck, windowOf } from "../model/limits.ts";
import type { Clock } from "../ports.ts";
import type { LimitStore, VerificationStore } from "../store/index.ts";

export type CheckVerificationDeps = {
  store: {
    transaction<T>(
      work: (tx: { verifications: Pick<VerificationStore, "lockForCheck" | "recordCheck"> }) => Promise<T>,
    ): Promise<T>;
    limits: Pick<LimitStore, "consume" | "read" | "release">;
  };
  keyring: Keyring;
  clock: Clock;
  /** Checks per calendar minute: of one project, and from one caller address (any project). */
  config: { checksPerMinute: { project: number; address: number } };
};

export type CheckVerificationResult =
  /**
   * The verification after the check (`approved`, `pending` with one attempt
   * fewer, or `max_attempts_reached`); `transition` names what this check
   * changed, for the metrics: every `ok` check changed the pending verification.
   */
  | {
      ok: true;
      verification: VerificationResource & { status: CheckOutcomeStatus };
      transition: "approved" | "attempt" | "max_attempts_reached";
    }
  | { ok: false; code: "verification_not_found" }
  /** Not pending: approved, expired (`expiredNow`: this check wrote it down), canceled, out of attempts, send_failed; whatever the code. */
  | { ok: false; code: "verification_not_pending"; status: VerificationStatus; expiredNow: boolean }
  /** Too many checks this minute, of the project or from the caller's address: nothing read or compared. */
  | (LimitRefusal & { subject: "verification_checks" });

/** Compared against when there is no row, so an unknown id costs what a known one does. */
const STAND_IN_INPUT = codeHashInput("vrf_stand_in", "stand-in");

export async function checkVerification(
  deps: CheckVerificationDeps,
  input: {
    projectId: string;
    verificationId: string;
    code: string;
    /** The caller's rate-limit subject (its address, an IPv6 /64). */
    address: string;
  },
): Promise<CheckVerificationResult> {
  const limited = await countCheck(deps, input);
  if (limited) return limited;
  const id = isId("vrf", input.verificationId) ? input.verificationId : "vrf_invalid";
  const standIn = await standInHash(deps.keyring);
  return deps.store.transaction(async (tx) => {
    const row = await tx.verifications.lockForCheck(id, input.projectId);
    const now = deps.clock.now();
    const matches = await deps.keyring.verifyFingerprint(
      codeHashInput(row?.id ?? "vrf_stand_in", input.code),
      row?.codeHash ?? standIn,
    );
    if (!row) return { ok: false, code: "verification_not_found" } as const;
    const matched = matches && row.codeHash !== null;
    const status = effectiveStatus(row, now);

    if (status === "expired" && row.status === "pending") {
      await tx.verifications.recordCheck({
        id: row.id,
        status: "expired",
        attemptsRemaining: row.attemptsRemaining,
        approvedAt: null,
        now: row.expiresAt,
      });
      return { ok: false, code: "verification_not_pending", status, expiredNow: true } as const;
    }
    if (status !== "pending") {
      return { ok: false, code: "verification_not_pending", status, expiredNow: false } as const;
    }
    const attemptsRemaining = matched ? row.attemptsRemaining : row.attemptsRemaining - 1;
    const next: CheckOutcomeStatus = matched
      ? "approved"
      : attemptsRemaining === 0
        ? "max_attempts_reached"
        : "pending";
    const updated = await tx.verifications.recordCheck({
      id: row.id,
      status: next,
      attemptsRemaining,
      approvedAt: matched ? now : null,
      now,
    });
    const transition = matched ? "approved" : next === "pending" ? "attempt" : "max_attempts_reached";
    // Pending until now (status above), so the resource's status is `next`.
    const verification = { ...toVerificationResource(updated, now), status: next };
    return { ok: true, verification, transition } as const;
  });
}

/** Counts the check in both windows, or in neither: the refusal, or null when it may go on. */
async function countCheck(
  deps: CheckVerificationDeps,
  input: { projectId: string; address: string },
): Promise<(LimitRefusal & { subject: "verification_checks" }) | null> {
  const now = deps.clock.now();
  const { project, address } = deps.config.checksPerMinute;
  const checks: LimitCheck[] = [
    {
      bucket: BUCKETS.verificationChecks(input.projectId),
      window: "minute",
      limit: project,
      refusal: "rate_limited",
    },
    {
      bucket: BUCKETS.verificationChecksPerAddress(input.address),
      window: "minute",
      limit: address,
      refusal: "rate_limited",
    },
  ];
  const taken: LimitCheck[] = [];
  for (const check of checks) {
    const outcome = await consumeEach(deps.store.limits, [check], now);
    if (!outcome.ok) {
      for (const earlier of taken) {
        await deps.store.limits.release(earlier.bucket, windowOf(earlier.window, now).start, 1);
      }
      return { ...outcome, subject: "verification_checks" };
    }
    taken.push(check);
  }
  return null;
}

const standIns = new WeakMap<Keyring, Promise<string>>();

/** A hash under the keyring's current key that no code matches (computed once per keyring). */
function standInHash(keyring: Keyring): Promise<string> {
  let hash = standIns.get(keyring);
  if (!hash) {
    hash = keyring.fingerprint(`${STAND_IN_INPUT}:never`);
    standIns.set(keyring, hash);
  }
  return hash;
}
