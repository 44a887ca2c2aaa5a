// Operator: everything about one project an operator needs at a glance — its
// state, sender, credits (the cached balance checked against the ledger), the
// free-tier allowance, its keys (prefixes only) and recent message counts.
// Reading is audited too ("project.viewed").
import { freeTierUsage, type FreeTierUsage, projectBalance } from "../credits/project-balance.ts";
import { DAY_MS } from "../time.ts";
import {
  type OperatorDeps,
  type OperatorRefusal,
  PROJECT_NOT_FOUND,
  checkCommon,
  writeAuditEntry,
} from "./operator-support.ts";

export type ProjectKeySummary = {
  id: string;
  mode: "test" | "live";
  /** The displayable start of the key; never the key. */
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
};

export type MessageCount = { mode: "test" | "live"; status: string; last24h: number; last7d: number };

export type ProjectDescription = {
  ok: true;
  project: {
    id: string;
    createdAt: Date;
    claimedAt: Date | null;
    accountId: string | null;
    suspendedAt: Date | null;
    /** null: the shared default sender. */
    sender: string | null;
    senderBrandId: number | null;
  };
  credits: { balance: number; ledgerSum: number; consistent: boolean; hasPaidCredits: boolean };
  freeTier: FreeTierUsage;
  keys: ProjectKeySummary[];
  messages: MessageCount[];
};

export async function describeProject(
  options: OperatorDeps & { projectId: string; freeTierDailySegments: number },
): Promise<ProjectDescription | OperatorRefusal> {
  const invalid = checkCommon(options, options.projectId);
  if (invalid) return invalid;
  const { prisma, projectId } = options;
  const now = options.clock.now();
  const project = await prisma.project.findUnique({
    where: { id: projectId },
    select: {
      id: true,
      createdAt: true,
      claimedAt: true,
      accountId: true,
      suspendedAt: true,
      sender: true,
      senderBrandId: true,
    },
  });
  if (!project) return PROJECT_NOT_FOUND(projectId);

  const dayAgo = new Date(now.getTime() - DAY_MS);
  const weekAgo = new Date(now.getTime() - 7 * DAY_MS);
  const [balance, keys, week, day] = await Promise.all([
    projectBalance({ prisma, projectId }),
    prisma.apiKey.findMany({
      where: { projectId },
      orderBy: { createdAt: "asc" },
      select: { id: true, mode: true, prefix: true, createdAt: true, revokedAt: true },
    }),
    prisma.message.groupBy({
      by: ["mode", "status"],
      where: { projectId, createdAt: { gte: weekAgo } },
      _count: { _all: true },
    }),
    prisma.message.groupBy({
      by: ["mode", "status"],
      where: { projectId, createdAt: { gte: dayAgo } },
      _count: { _all: true },
    }),
  ]);
  if (!balance.ok) return PROJECT_NOT_FOUND(projectId);
  const freeTier = await freeTierUsage({
    prisma,
    projectId,
    hasPaidCredits: balance.hasPaidCredits,
    dailySegments: options.freeTierDailySegments,
    now,
  });

  const messages: MessageCount[] = week
    .map((row) => ({
      mode: row.mode,
      status: row.status,
      last7d: row._count._all,
      last24h: day.find((d) => d.mode === row.mode && d.status === row.status)?._count._all ?? 0,
    }))
    .sort((a, b) => (a.mode + a.status < b.mode + b.status ? -1 : 1));

  await writeAuditEntry(prisma, {
    actor: options.actor,
    action: "project.viewed",
    projectId,
    details: {},
    now,
  });
  return {
    ok: true,
    project,
    credits: {
      balance: balance.balance,
      ledgerSum: balance.ledgerSum,
      consistent: balance.consistent,
      hasPaidCredits: balance.hasPaidCredits,
    },
    freeTier,
    keys,
    messages,
  };
}
