// Credit balance reads (spec 1.3, 4.2 rules 3–4). The balance lives in
// projects.credit_balance, a cache of the ledger kept in step by every writer
// (grant, reservation, refund) in the same transaction as its ledger row; a
// CHECK keeps it >= 0. These reads never change anything.
import type { PrismaClient } from "@sms/db";
import { DAY_MS, startOfUtcDay } from "../time.ts";

type Reader = Pick<PrismaClient, "project" | "creditLedgerEntry" | "$queryRaw">;

export type CreditLedgerKind = "grant_paid" | "grant_free" | "reservation" | "refund";

export type ProjectBalance = {
  projectId: string;
  /** The cached balance (what a send reserves against). */
  balance: number;
  /** The sum of every ledger entry of the project. */
  ledgerSum: number;
  /** True when the cached balance equals the ledger sum (it always should). */
  consistent: boolean;
  /** Paid credits were granted at least once: the free-tier allowance no longer applies. */
  hasPaidCredits: boolean;
};

export type ProjectBalanceResult =
  | ({ ok: true } & ProjectBalance)
  | { ok: false; code: "project_not_found"; message: string };

/** The counter the free-tier allowance of a project is consumed from (one window per UTC day). */
export function freeTierBucket(projectId: string): string {
  return `free_tier_segments:${projectId}`;
}

export async function projectBalance(options: {
  prisma: Reader;
  projectId: string;
}): Promise<ProjectBalanceResult> {
  const project = await options.prisma.project.findUnique({
    where: { id: options.projectId },
    select: { id: true, creditBalance: true, hasPaidCredits: true },
  });
  if (!project) return { ok: false, code: "project_not_found", message: `No project ${options.projectId}.` };
  const sum = await options.prisma.creditLedgerEntry.aggregate({
    where: { projectId: project.id },
    _sum: { amount: true },
  });
  const ledgerSum = sum._sum.amount ?? 0;
  return {
    ok: true,
    projectId: project.id,
    balance: project.creditBalance,
    ledgerSum,
    consistent: ledgerSum === project.creditBalance,
    hasPaidCredits: project.hasPaidCredits,
  };
}

export type CreditLedgerLine = {
  id: string;
  kind: CreditLedgerKind;
  amount: number;
  messageId: string | null;
  note: string | null;
  createdAt: Date;
};

/** The newest ledger entries of a project, newest first. */
export async function listCreditLedger(options: {
  prisma: Reader;
  projectId: string;
  limit?: number;
}): Promise<CreditLedgerLine[]> {
  return options.prisma.creditLedgerEntry.findMany({
    where: { projectId: options.projectId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: options.limit ?? 20,
    select: { id: true, kind: true, amount: true, messageId: true, note: true, createdAt: true },
  });
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
export async function freeTierUsage(options: {
  prisma: Reader;
  projectId: string;
  hasPaidCredits: boolean;
  dailySegments: number;
  now: Date;
}): Promise<FreeTierUsage> {
  const start = startOfUtcDay(options.now);
  const resetAt = new Date(start.getTime() + DAY_MS);
  const rows = await options.prisma.$queryRaw<Array<{ count: number }>>`
    SELECT count FROM rate_limit_counters WHERE bucket = ${freeTierBucket(options.projectId)} AND window_start = ${start}`;
  const usedToday = Number(rows[0]?.count ?? 0);
  return {
    applies: !options.hasPaidCredits,
    limit: options.dailySegments,
    usedToday,
    remainingToday: Math.max(0, options.dailySegments - usedToday),
    resetAt,
  };
}
