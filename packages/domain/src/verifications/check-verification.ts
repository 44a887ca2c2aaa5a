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
import { isId } from "@sms/crypto";
import type { Keyring } from "@sms/crypto";
import {
  codeHashInput,
  effectiveStatus,
  toVerificationResource,
  type VerificationResource,
  type VerificationStatus,
} from "../model/verification.ts";
import type { Clock } from "../ports.ts";
import type { VerificationStore } from "../store/index.ts";

export type CheckVerificationDeps = {
  store: {
    transaction<T>(
      work: (tx: { verifications: Pick<VerificationStore, "lockForCheck" | "recordCheck"> }) => Promise<T>,
    ): Promise<T>;
  };
  keyring: Keyring;
  clock: Clock;
};

export type CheckVerificationResult =
  /**
   * The verification after the check (`approved`, `pending` with one attempt
   * fewer, or `max_attempts_reached`); `transition` names what this check
   * changed, for the metrics: every `ok` check changed the pending verification.
   */
  | {
      ok: true;
      verification: VerificationResource;
      transition: "approved" | "attempt" | "max_attempts_reached";
    }
  | { ok: false; code: "verification_not_found" }
  /** Not pending: approved, expired (`expiredNow`: this check wrote it down), canceled, out of attempts, send_failed; whatever the code. */
  | { ok: false; code: "verification_not_pending"; status: VerificationStatus; expiredNow: boolean };

/** Compared against when there is no row, so an unknown id costs what a known one does. */
const STAND_IN_INPUT = codeHashInput("vrf_stand_in", "stand-in");

export async function checkVerification(
  deps: CheckVerificationDeps,
  input: { projectId: string; verificationId: string; code: string },
): Promise<CheckVerificationResult> {
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
    const next: VerificationStatus = matched
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
    return { ok: true, verification: toVerificationResource(updated, now), transition } as const;
  });
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
