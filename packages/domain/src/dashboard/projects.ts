// An account holder's projects: the list, and one project at a glance (state,
// sender and any pending request, credits checked against the ledger, the
// free-tier allowance, today's messages).
import {
  type CheckedCredits,
  checkedCredits,
  type FreeTierUsage,
  freeTierUsage,
} from "../credits/project-balance.ts";
import { nextUtcMidnight, startOfUtcDay } from "../model/time.ts";
import type { Clock } from "../ports.ts";
import type { AccountProjectRow, ProjectRecord, SenderRequestRecord, Store } from "../store/index.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";
import { type Page, pageOf } from "./paging.ts";
import { projectSpending, type Spending } from "./spending.ts";

export type ProjectCursor = { claimedAt: Date; id: string };

export async function listAccountProjects(
  deps: { store: Pick<Store, "projects">; clock: Clock },
  input: { viewer: AccountViewer; after: ProjectCursor | null; limit: number },
): Promise<{ ok: true } & Page<AccountProjectRow, ProjectCursor>> {
  const { accountId } = input.viewer;
  if (accountId === null) return { ok: true, items: [], next: null };
  const rows = await deps.store.projects.listForAccount({
    accountId,
    todayStart: startOfUtcDay(deps.clock.now()),
    after: input.after,
    limit: input.limit + 1,
  });
  // Listed projects are claimed: claimed_at is set.
  return {
    ok: true,
    ...pageOf(rows, input.limit, (row) => ({ claimedAt: row.claimedAt ?? row.createdAt, id: row.id })),
  };
}

export type ProjectOverview = {
  ok: true;
  project: ProjectRecord;
  credits: CheckedCredits;
  freeTier: FreeTierUsage;
  pendingSenderRequest: SenderRequestRecord | null;
  messagesToday: number;
  spending: Spending;
};

export async function projectOverview(
  deps: {
    store: Pick<Store, "projects" | "ledger" | "limits" | "senderRequests" | "messageLog">;
    clock: Clock;
    config: { freeTierDailySegments: number };
  },
  input: { viewer: AccountViewer; projectId: string },
): Promise<ProjectOverview | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const now = deps.clock.now();
  const today = startOfUtcDay(now);
  const [balance, pending, usage, spending] = await Promise.all([
    deps.store.ledger.balance(project.id),
    deps.store.senderRequests.pendingFor(project.id),
    deps.store.messageLog.usageByDay(project.id, today, nextUtcMidnight(now)),
    projectSpending(deps, project),
  ]);
  if (!balance) return PROJECT_NOT_FOUND;
  const freeTier = await freeTierUsage(deps, {
    projectId: project.id,
    hasPaidCredits: balance.hasPaidCredits,
    now,
  });
  return {
    ok: true,
    project,
    credits: checkedCredits(balance),
    freeTier,
    pendingSenderRequest: pending,
    messagesToday: usage.reduce((sum, row) => sum + row.messages, 0),
    spending,
  };
}
