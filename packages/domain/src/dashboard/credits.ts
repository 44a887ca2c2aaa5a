// An account holder's credits: the balance checked against the ledger (as the
// operator's `show` does), the free-tier allowance used today, and the
// ledger itself, paged, each entry with the message it belongs to.
import {
  type CheckedCredits,
  checkedCredits,
  freeTierUsage,
  type FreeTierUsage,
} from "../credits/project-balance.ts";
import type { Clock } from "../ports.ts";
import type { LedgerEntry, Store } from "../store/index.ts";
import type { Cursor } from "../store/message-log.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";
import { type Page, pageOf } from "./paging.ts";

export type ProjectCredits = {
  ok: true;
  credits: CheckedCredits;
  freeTier: FreeTierUsage;
  ledger: Page<LedgerEntry, Cursor>;
};

export async function projectCredits(
  deps: {
    store: Pick<Store, "projects" | "ledger" | "limits">;
    clock: Clock;
    config: { freeTierDailySegments: number };
  },
  input: { viewer: AccountViewer; projectId: string; after: Cursor | null; limit: number },
): Promise<ProjectCredits | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const [balance, rows] = await Promise.all([
    deps.store.ledger.balance(project.id),
    deps.store.ledger.listPage(project.id, input.after, input.limit + 1),
  ]);
  if (!balance) return PROJECT_NOT_FOUND;
  const freeTier = await freeTierUsage(deps, {
    projectId: project.id,
    hasPaidCredits: balance.hasPaidCredits,
    now: deps.clock.now(),
  });
  return {
    ok: true,
    credits: checkedCredits(balance),
    freeTier,
    ledger: pageOf(rows, input.limit, (row) => ({ createdAt: row.createdAt, id: row.id })),
  };
}
