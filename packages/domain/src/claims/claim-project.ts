// Confirming a claim (spec 1.4, 4.1): in one transaction, the account of the
// signed-in identity is found or created, the project is attached to it, the
// free credits are granted and the claim token is marked used.
//
// The claim token row is locked (SELECT … FOR UPDATE) first, so concurrent
// confirmations of one link queue up behind each other and exactly one
// claims; the rest see a used token. A repeat by the account that claimed is
// answered with `already_claimed_by_you` and grants nothing.
import { newId } from "@sms/crypto";
import type { Prisma, PrismaClient } from "@sms/db";
import type { ClaimIdentity } from "./describe-claim.ts";

export type ClaimProjectResult =
  | {
      outcome: "claimed";
      projectId: string;
      accountId: string;
      creditsGranted: number;
      accountCreated: boolean;
    }
  | { outcome: "already_claimed_by_you"; projectId: string; accountId: string }
  /** Used by another account (or the project was attached some other way). */
  | { outcome: "used" }
  | { outcome: "expired" }
  | { outcome: "unknown" };

type LockedToken = {
  id: string;
  project_id: string;
  expires_at: Date;
  used_at: Date | null;
  used_by_account_id: string | null;
};

type LockedProject = { claimed_at: Date | null; account_id: string | null };

export const CLAIM_GRANT_NOTE = "free credits for claiming the project";

async function findAccountId(tx: Prisma.TransactionClient, identity: ClaimIdentity): Promise<string | null> {
  const row = await tx.accountIdentity.findUnique({
    where: { provider_subject: { provider: identity.provider, subject: identity.subject } },
    select: { accountId: true },
  });
  return row?.accountId ?? null;
}

/**
 * The account for `identity`, created when there is none. Two transactions
 * creating the same new identity at once (one person claiming two projects in
 * two tabs) meet on the (provider, subject) unique index: the loser's insert
 * does nothing, it drops the account it just made and uses the winner's.
 */
async function findOrCreateAccount(
  tx: Prisma.TransactionClient,
  identity: ClaimIdentity,
  now: Date,
): Promise<{ accountId: string; created: boolean }> {
  const existing = await findAccountId(tx, identity);
  if (existing) return { accountId: existing, created: false };
  const accountId = newId("acc", now.getTime());
  await tx.account.create({
    data: { id: accountId, email: identity.email, name: identity.name, createdAt: now },
  });
  const inserted = await tx.accountIdentity.createManyAndReturn({
    data: [
      {
        id: newId("aid", now.getTime()),
        accountId,
        provider: identity.provider,
        subject: identity.subject,
        email: identity.email,
        createdAt: now,
      },
    ],
    skipDuplicates: true,
    select: { accountId: true },
  });
  if (inserted.length === 1) return { accountId, created: true };
  await tx.account.delete({ where: { id: accountId } });
  const winner = await findAccountId(tx, identity);
  if (!winner) throw new Error("account identity vanished during claim");
  return { accountId: winner, created: false };
}

export async function claimProject(options: {
  prisma: PrismaClient;
  tokenHash: string;
  identity: ClaimIdentity;
  /** Credits granted on a successful claim (CLAIM_FREE_CREDITS). */
  freeCredits: number;
  now: Date;
}): Promise<ClaimProjectResult> {
  const { prisma, identity, now } = options;
  if (!Number.isInteger(options.freeCredits) || options.freeCredits < 0) {
    throw new RangeError("freeCredits must be a non-negative integer");
  }
  return prisma.$transaction(async (tx): Promise<ClaimProjectResult> => {
    const [token] = await tx.$queryRaw<LockedToken[]>`
      SELECT id, project_id, expires_at, used_at, used_by_account_id
      FROM claim_tokens WHERE token_hash = ${options.tokenHash}
      FOR UPDATE`;
    if (!token) return { outcome: "unknown" };

    if (token.used_at) {
      const accountId = await findAccountId(tx, identity);
      return accountId && accountId === token.used_by_account_id
        ? { outcome: "already_claimed_by_you", projectId: token.project_id, accountId }
        : { outcome: "used" };
    }

    const [project] = await tx.$queryRaw<LockedProject[]>`
      SELECT claimed_at, account_id FROM projects WHERE id = ${token.project_id} FOR UPDATE`;
    if (!project) return { outcome: "unknown" };
    if (project.claimed_at) {
      // Attached without this link (by the operator): the link is spent.
      const accountId = await findAccountId(tx, identity);
      return accountId && accountId === project.account_id
        ? { outcome: "already_claimed_by_you", projectId: token.project_id, accountId }
        : { outcome: "used" };
    }
    if (token.expires_at.getTime() <= now.getTime()) return { outcome: "expired" };

    const { accountId, created } = await findOrCreateAccount(tx, identity, now);
    const credits = options.freeCredits;
    // Free credits raise the balance but not has_paid_credits: the free-tier
    // daily allowance still applies until paid credits are granted.
    await tx.$executeRaw`
      UPDATE projects
      SET account_id = ${accountId}, claimed_at = ${now}, credit_balance = credit_balance + ${credits}, updated_at = ${now}
      WHERE id = ${token.project_id}`;
    if (credits > 0) {
      await tx.creditLedgerEntry.create({
        data: {
          id: newId("cre", now.getTime()),
          projectId: token.project_id,
          kind: "grant_free",
          amount: credits,
          note: CLAIM_GRANT_NOTE,
          createdAt: now,
        },
      });
    }
    await tx.claimToken.update({
      where: { id: token.id },
      data: { usedAt: now, usedByAccountId: accountId },
    });
    return {
      outcome: "claimed",
      projectId: token.project_id,
      accountId,
      creditsGranted: credits,
      accountCreated: created,
    };
  });
}
