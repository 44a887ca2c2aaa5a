// Operator: grant paid credits (spec 1.3, 8). One transaction writes the
// `grant_paid` ledger entry, raises the cached balance and sets
// has_paid_credits (which lifts the free-tier allowance). With a reference
// (an invoice or payment id) the grant is idempotent: the same reference and
// amount again changes nothing; the same reference with another amount is
// refused.
import { newId } from "@sms/crypto";
import {
  type OperatorDeps,
  type OperatorRefusal,
  PROJECT_NOT_FOUND,
  checkCommon,
  refuse,
  writeAuditEntry,
} from "./operator-support.ts";

export const MAX_CREDIT_GRANT = 1_000_000;
const REFERENCE_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,198}[\x21-\x7e])?$/;

export type GrantPaidCreditsResult =
  | {
      ok: true;
      projectId: string;
      amount: number;
      reference: string | null;
      entryId: string;
      /** The balance after the grant. */
      balance: number;
      /** True when a grant with this reference already existed (nothing changed). */
      alreadyGranted: boolean;
    }
  | OperatorRefusal;

const referenceNote = (reference: string) => `reference:${reference}`;

export async function grantPaidCredits(
  options: OperatorDeps & { projectId: string; amount: number; reference?: string },
): Promise<GrantPaidCreditsResult> {
  const invalid = checkCommon(options, options.projectId);
  if (invalid) return invalid;
  const { projectId, amount } = options;
  if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_CREDIT_GRANT) {
    return refuse("invalid_input", `The amount must be a whole number from 1 to ${MAX_CREDIT_GRANT}.`);
  }
  const reference = options.reference ?? null;
  if (reference !== null && !REFERENCE_PATTERN.test(reference)) {
    return refuse(
      "invalid_input",
      "The reference must be 1–200 printable ASCII characters, not starting or ending with a space.",
    );
  }
  const now = options.clock.now();

  return options.prisma.$transaction(async (tx): Promise<GrantPaidCreditsResult> => {
    // The project row lock serialises grants (and reservations) of this project,
    // so two grants with one reference cannot both pass the check below.
    const locked = await tx.$queryRaw<Array<{ claimed_at: Date | null; credit_balance: number }>>`
      SELECT claimed_at, credit_balance FROM projects WHERE id = ${projectId} FOR UPDATE`;
    const project = locked[0];
    if (!project) return PROJECT_NOT_FOUND(projectId);
    if (!project.claimed_at) {
      return refuse(
        "project_not_claimed",
        `Project ${projectId} has not been claimed: paid credits are only for projects a human has claimed.`,
      );
    }
    if (reference !== null) {
      const earlier = await tx.creditLedgerEntry.findFirst({
        where: { projectId, kind: "grant_paid", note: referenceNote(reference) },
        select: { id: true, amount: true },
      });
      if (earlier && earlier.amount !== amount) {
        return refuse(
          "reference_conflict",
          `Reference ${reference} was already used for a grant of ${earlier.amount} credits to this project; nothing changed.`,
        );
      }
      if (earlier) {
        await writeAuditEntry(tx, {
          actor: options.actor,
          action: "credits.granted",
          projectId,
          details: { amount, reference, entry_id: earlier.id, already_granted: true },
          now,
        });
        return {
          ok: true,
          projectId,
          amount,
          reference,
          entryId: earlier.id,
          balance: Number(project.credit_balance),
          alreadyGranted: true,
        };
      }
    }
    const entryId = newId("cre", now.getTime());
    await tx.creditLedgerEntry.create({
      data: {
        id: entryId,
        projectId,
        kind: "grant_paid",
        amount,
        note: reference === null ? "paid credits" : referenceNote(reference),
        createdAt: now,
      },
    });
    const updated = await tx.project.update({
      where: { id: projectId },
      data: { creditBalance: { increment: amount }, hasPaidCredits: true, updatedAt: now },
      select: { creditBalance: true },
    });
    await writeAuditEntry(tx, {
      actor: options.actor,
      action: "credits.granted",
      projectId,
      details: {
        amount,
        reference,
        entry_id: entryId,
        balance: updated.creditBalance,
        already_granted: false,
      },
      now,
    });
    return {
      ok: true,
      projectId,
      amount,
      reference,
      entryId,
      balance: updated.creditBalance,
      alreadyGranted: false,
    };
  });
}
