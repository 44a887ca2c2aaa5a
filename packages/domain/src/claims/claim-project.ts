// Confirming a claim (spec 1.4, 4.1): in one transaction, the account of the
// signed-in identity is found or created, the project is attached to it, the
// free credits are granted and the claim token is marked used.
//
// The claim token row is locked (SELECT … FOR UPDATE) first, so concurrent
// confirmations of one link queue up behind each other and exactly one
// claims; the rest see a used token. A repeat by the account that claimed is
// answered `claimed_by_you` and grants nothing.
import { newId } from "@sms/crypto";
import type { Store, StoreTx } from "../store/index.ts";
import type { ClaimIdentity, ClaimRefusal } from "./describe-claim.ts";

export type ClaimProjectResult =
  | { ok: true; projectId: string; accountId: string; creditsGranted: number; accountCreated: boolean }
  | ClaimRefusal;

export const CLAIM_GRANT_NOTE = "free credits for claiming the project";

/**
 * The account for `identity`, created when there is none. Two transactions
 * creating the same new identity at once (one person claiming two projects in
 * two tabs) meet on the (provider, subject) unique index: the loser's insert
 * does nothing, it drops the account it just made and uses the winner's.
 */
async function findOrCreateAccount(
  tx: StoreTx,
  identity: ClaimIdentity,
  now: Date,
): Promise<{ accountId: string; created: boolean }> {
  const existing = await tx.accounts.findByIdentity(identity.provider, identity.subject);
  if (existing) return { accountId: existing, created: false };
  const accountId = newId("acc", now.getTime());
  await tx.accounts.create({ id: accountId, email: identity.email, name: identity.name, now });
  const linked = await tx.accounts.addIdentity({
    id: newId("aid", now.getTime()),
    accountId,
    provider: identity.provider,
    subject: identity.subject,
    email: identity.email,
    now,
  });
  if (linked) return { accountId, created: true };
  await tx.accounts.delete(accountId);
  const winner = await tx.accounts.findByIdentity(identity.provider, identity.subject);
  if (!winner) throw new Error("account identity vanished during claim");
  return { accountId: winner, created: false };
}

/** A spent link: "claimed by you" when `owner` is the identity's account, else "used". */
async function spent(
  tx: StoreTx,
  identity: ClaimIdentity,
  projectId: string,
  owner: string | null,
): Promise<ClaimRefusal> {
  const accountId = await tx.accounts.findByIdentity(identity.provider, identity.subject);
  return accountId && accountId === owner
    ? { ok: false, code: "claimed_by_you", projectId, accountId }
    : { ok: false, code: "used" };
}

export async function claimProject(
  deps: { store: Pick<Store, "transaction">; config: { freeCredits: number } },
  input: { tokenHash: string; identity: ClaimIdentity; now: Date },
): Promise<ClaimProjectResult> {
  const { identity, now } = input;
  const credits = deps.config.freeCredits;
  if (!Number.isInteger(credits) || credits < 0)
    throw new RangeError("freeCredits must be a non-negative integer");
  return deps.store.transaction(async (tx): Promise<ClaimProjectResult> => {
    const token = await tx.claims.lockByHash(input.tokenHash);
    if (!token) return { ok: false, code: "unknown" };
    if (token.usedAt) return spent(tx, identity, token.projectId, token.usedByAccountId);
    const project = await tx.projects.lock(token.projectId);
    if (!project) return { ok: false, code: "unknown" };
    // Attached without this link (by the operator): the link is spent.
    if (project.claimedAt) return spent(tx, identity, token.projectId, project.accountId);
    if (token.expiresAt.getTime() <= now.getTime()) return { ok: false, code: "expired" };
    const { accountId, created } = await findOrCreateAccount(tx, identity, now);
    await tx.projects.attachAccount(token.projectId, accountId, now);
    // Free credits raise the balance but not has_paid_credits: the free-tier
    // daily allowance still applies until paid credits are granted.
    if (credits > 0) {
      await tx.ledger.grant({
        projectId: token.projectId,
        kind: "grant_free",
        amount: credits,
        note: CLAIM_GRANT_NOTE,
        now,
      });
    }
    await tx.claims.markUsed(token.id, accountId, now);
    return {
      ok: true,
      projectId: token.projectId,
      accountId,
      creditsGranted: credits,
      accountCreated: created,
    };
  });
}
