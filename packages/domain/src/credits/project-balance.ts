// Credit balance reads (spec 1.3, 4.2 rules 3–4). The balance lives in
// projects.credit_balance, a cache of the ledger kept in step by its one
// writer (store/ledger.ts). These reads never change anything.
import { BUCKETS, windowOf } from "../model/limits.ts";
import type { Balance, LedgerEntry, Store } from "../store/index.ts";

/** A project's balance beside its ledger sum. */
export type CheckedCredits = Balance & {
  /** True when the cached balance equals the ledger sum (it always should). */
  consistent: boolean;
};

export function checkedCredits(balance: Balance): CheckedCredits {
  return { ...balance, consistent: balance.ledgerSum === balance.balance };
}

export type ProjectBalance = CheckedCredits & { projectId: string };

export type ProjectBalanceResult = ({ ok: true } & ProjectBalance) | { ok: false; code: "project_not_found" };

export async function projectBalance(
  deps: { store: Pick<Store, "ledger"> },
  input: { projectId: string },
): Promise<ProjectBalanceResult> {
  const balance = await deps.store.ledger.balance(input.projectId);
  if (!balance) return { ok: false, code: "project_not_found" };
  return { ok: true, projectId: input.projectId, ...checkedCredits(balance) };
}

/** The newest ledger entries of a project, newest first. */
export function listCreditLedger(
  deps: { store: Pick<Store, "ledger"> },
  input: { projectId: string; limit?: number },
): Promise<LedgerEntry[]> {
  return deps.store.ledger.listPage(input.projectId, null, input.limit ?? 20);
}

export type FreeTierUsage = {
  /** False once paid credits were granted. */
  applies: boolean;
  limit: number;
  usedToday: number;
  remainingToday: number;
  /** The next midnight UTC. */
  resetAt: Date;
};

/** Free-tier segments used today (UTC) by a project's live sends. */
export async function freeTierUsage(
  deps: { store: Pick<Store, "limits">; config: { freeTierDailySegments: number } },
  input: { projectId: string; hasPaidCredits: boolean; now: Date },
): Promise<FreeTierUsage> {
  const { start, end } = windowOf("utc_day", input.now);
  const usedToday = await deps.store.limits.read(BUCKETS.freeTierSegments(input.projectId), start);
  const limit = deps.config.freeTierDailySegments;
  return {
    applies: !input.hasPaidCredits,
    limit,
    usedToday,
    remainingToday: Math.max(0, limit - usedToday),
    resetAt: end,
  };
}
