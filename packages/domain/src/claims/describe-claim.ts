// What a claim link stands for, without consuming it: the project summary a
// human sees before signing in, or why the link no longer works. Looked up by
// the token's SHA-256 hash only; the token itself never reaches the domain.
import type { PrismaClient } from "@sms/db";

/** An external identity as a provider vouches for it. */
export type ClaimIdentity = {
  /** "google" or "github". */
  provider: string;
  /** The provider's stable user id (OIDC `sub`, GitHub numeric id). */
  subject: string;
  email: string | null;
  name: string | null;
};

/** What the claim page may show about a project: nothing secret. */
export type ClaimSummary = {
  projectId: string;
  projectCreatedAt: Date;
  /** Messages the project has sent so far (both key modes). */
  messagesSent: number;
  /** The displayable start of the test key (`sk_test_AbCd`), never the key. */
  keyPrefix: string | null;
  /** When the link stops working if unused. */
  expiresAt: Date;
};

export type DescribeClaimResult =
  | { status: "claimable"; summary: ClaimSummary }
  /** Used (or the project claimed) by the account of the identity passed in. */
  | { status: "claimed_by_you"; projectId: string }
  | { status: "used" }
  | { status: "expired" }
  | { status: "unknown" };

export async function describeClaim(options: {
  prisma: PrismaClient;
  tokenHash: string;
  now: Date;
  /** The signed-in identity, if any: lets a used link say "claimed by you". */
  identity?: Pick<ClaimIdentity, "provider" | "subject">;
}): Promise<DescribeClaimResult> {
  const { prisma, now } = options;
  const token = await prisma.claimToken.findUnique({
    where: { tokenHash: options.tokenHash },
    select: {
      projectId: true,
      expiresAt: true,
      usedAt: true,
      usedByAccountId: true,
      project: { select: { createdAt: true, claimedAt: true, accountId: true } },
    },
  });
  if (!token) return { status: "unknown" };

  if (token.usedAt || token.project.claimedAt) {
    const owner = token.usedAt ? token.usedByAccountId : token.project.accountId;
    if (options.identity && owner) {
      const identity = await prisma.accountIdentity.findUnique({
        where: {
          provider_subject: { provider: options.identity.provider, subject: options.identity.subject },
        },
        select: { accountId: true },
      });
      if (identity?.accountId === owner) return { status: "claimed_by_you", projectId: token.projectId };
    }
    return { status: "used" };
  }
  if (token.expiresAt.getTime() <= now.getTime()) return { status: "expired" };

  const [messagesSent, key] = await Promise.all([
    prisma.message.count({ where: { projectId: token.projectId } }),
    prisma.apiKey.findFirst({
      where: { projectId: token.projectId, mode: "test", revokedAt: null },
      orderBy: { createdAt: "asc" },
      select: { prefix: true },
    }),
  ]);
  return {
    status: "claimable",
    summary: {
      projectId: token.projectId,
      projectCreatedAt: token.project.createdAt,
      messagesSent,
      keyPrefix: key?.prefix ?? null,
      expiresAt: token.expiresAt,
    },
  };
}
