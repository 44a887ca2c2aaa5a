// Operator: grant paid credits (spec 1.3, 8). One transaction writes the
// `grant_paid` ledger entry, raises the cached balance and sets
// has_paid_credits (which lifts the free-tier allowance). With a reference
// (an invoice or payment id) the grant is idempotent: the same reference and
// amount again changes nothing; the same reference with another amount is
// refused.
import { MAX_CREDIT_GRANT } from "../model/credits.ts";
import {
  checkCommon,
  invalid,
  type OperatorDeps,
  type OperatorInput,
  type OperatorRefusal,
  projectNotFound,
} from "./operator-support.ts";

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
  deps: OperatorDeps,
  input: OperatorInput & { projectId: string; amount: number; reference?: string },
): Promise<GrantPaidCreditsResult> {
  const refused = checkCommon(input, input.projectId);
  if (refused) return refused;
  const { projectId, amount } = input;
  if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_CREDIT_GRANT) return invalid("amount");
  const reference = input.reference ?? null;
  if (reference !== null && !REFERENCE_PATTERN.test(reference)) return invalid("reference");
  const now = deps.clock.now();

  return deps.store.transaction(async (tx): Promise<GrantPaidCreditsResult> => {
    // The project row lock serialises grants (and reservations) of this project,
    // so two grants with one reference cannot both pass the check below.
    const project = await tx.projects.lock(projectId);
    if (!project) return projectNotFound(projectId);
    if (!project.claimedAt) return { ok: false, code: "project_not_claimed", projectId };
    if (reference !== null) {
      const earlier = await tx.ledger.findGrant(projectId, "grant_paid", referenceNote(reference));
      if (earlier && earlier.amount !== amount) {
        return { ok: false, code: "reference_conflict", reference, earlierAmount: earlier.amount };
      }
      if (earlier) {
        await tx.audit.write({
          actor: input.actor,
          action: "credits.granted",
          projectId,
          details: { amount, reference, entry_id: earlier.entryId, already_granted: true },
          now,
        });
        return {
          ok: true,
          projectId,
          amount,
          reference,
          entryId: earlier.entryId,
          balance: project.creditBalance,
          alreadyGranted: true,
        };
      }
    }
    const { entryId, balance } = await tx.ledger.grant({
      projectId,
      kind: "grant_paid",
      amount,
      note: reference === null ? "paid credits" : referenceNote(reference),
      now,
    });
    await tx.audit.write({
      actor: input.actor,
      action: "credits.granted",
      projectId,
      details: { amount, reference, entry_id: entryId, balance, already_granted: false },
      now,
    });
    return { ok: true, projectId, amount, reference, entryId, balance, alreadyGranted: false };
  });
}
