// What a claim link stands for, without consuming it: the project summary a
// human sees before signing in, or why the link no longer works. Looked up by
// the token's SHA-256 hash only; the token itself never reaches the domain.
import type { Store } from "../store/index.ts";

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

/**
 * Why a link cannot be claimed (now): claimed by the account of the identity
 * given, used by someone else (or the project attached another way), expired,
 * or no such link. The same codes answer describeClaim and claimProject.
 */
export type ClaimRefusal =
  | { ok: false; code: "claimed_by_you"; projectId: string; accountId: string }
  | { ok: false; code: "used" | "expired" | "unknown" };

export type DescribeClaimResult = { ok: true; summary: ClaimSummary } | ClaimRefusal;

export type ClaimStoreDeps = { store: Pick<Store, "claims" | "accounts" | "messages" | "keys"> };

export async function describeClaim(
  deps: ClaimStoreDeps,
  input: {
    tokenHash: string;
    now: Date;
    /** The signed-in identity, if any: lets a used link say "claimed by you". */
    identity?: Pick<ClaimIdentity, "provider" | "subject">;
  },
): Promise<DescribeClaimResult> {
  const { store } = deps;
  const token = await store.claims.viewByHash(input.tokenHash);
  if (!token) return { ok: false, code: "unknown" };

  if (token.usedAt || token.project.claimedAt) {
    const owner = token.usedAt ? token.usedByAccountId : token.project.accountId;
    if (input.identity && owner) {
      const accountId = await store.accounts.findByIdentity(input.identity.provider, input.identity.subject);
      if (accountId === owner)
        return { ok: false, code: "claimed_by_you", projectId: token.projectId, accountId };
    }
    return { ok: false, code: "used" };
  }
  if (token.expiresAt.getTime() <= input.now.getTime()) return { ok: false, code: "expired" };

  const [messagesSent, key] = await Promise.all([
    store.messages.countInProject(token.projectId),
    store.keys.firstActive(token.projectId, "test"),
  ]);
  return {
    ok: true,
    summary: {
      projectId: token.projectId,
      projectCreatedAt: token.project.createdAt,
      messagesSent,
      keyPrefix: key?.prefix ?? null,
      expiresAt: token.expiresAt,
    },
  };
}
