// A test key's project made a claimed one with a live key, as the live-sending
// suites need it (credits.integration, live.e2e, pgbouncer.e2e).
import { newId } from "@sms/crypto";
import type { PrismaClient } from "@sms/db/testing";
import { type Clock, createLiveKey, grantPaidCredits, type Store } from "@sms/domain";

/** Who the operator's audit rows name for these grants and keys. */
export const ACTOR = "test-suite";

export type LiveProjectDeps = { store: Store; clock: Clock; prisma: PrismaClient };

/**
 * Claims `projectId` and gives it a live key: `free` credits as the claim
 * grants them, `paid` ones through the operator's grant. Returns the live key.
 */
export async function claimWithLiveKey(
  deps: LiveProjectDeps,
  projectId: string,
  credits: { free?: number; paid?: number } = {},
): Promise<{ projectId: string; apiKey: string }> {
  const ops = { store: deps.store, clock: deps.clock };
  const now = deps.clock.now();
  await deps.prisma.project.update({ where: { id: projectId }, data: { claimedAt: now } });
  if (credits.free) {
    await deps.prisma.creditLedgerEntry.create({
      data: {
        id: newId("cre"),
        projectId,
        kind: "grant_free",
        amount: credits.free,
        note: "claim",
        createdAt: now,
      },
    });
    await deps.prisma.project.update({
      where: { id: projectId },
      data: { creditBalance: { increment: credits.free } },
    });
  }
  if (credits.paid) {
    const granted = await grantPaidCredits(ops, { actor: ACTOR, projectId, amount: credits.paid });
    if (!granted.ok) throw new Error(JSON.stringify(granted));
  }
  const key = await createLiveKey(ops, { actor: ACTOR, projectId });
  if (!key.ok) throw new Error(JSON.stringify(key));
  return { projectId, apiKey: key.apiKey };
}
