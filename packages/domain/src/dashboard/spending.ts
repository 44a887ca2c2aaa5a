// Controlling spending (docs/dashboard.md#spending): the daily credit cap (the
// reservation statement enforces it, store/ledger.ts), the low-balance
// threshold, and what the pages show of both: today's use of the cap and,
// under the threshold, an estimate of the days left at the last 7 days' rate.
import { DAY_MS, startOfUtcDay } from "../model/time.ts";
import type { Clock } from "../ports.ts";
import type { ProjectRecord, Store } from "../store/index.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";

export const MAX_DAILY_CREDIT_CAP = 1_000_000;
export const MAX_LOW_BALANCE_THRESHOLD = 1_000_000;
const RATE_DAYS = 7;

export type Spending = {
  dailyCreditCap: number | null;
  /** Credits reserved today (UTC), less refunds. */
  usedToday: number;
  lowBalanceThreshold: number | null;
  /** The balance is under the threshold. */
  lowBalance: boolean;
  /** Credits used a day on average over the last 7 days. */
  dailyRate: number;
  /** Days the balance lasts at that rate; null when nothing was spent. */
  daysLeft: number | null;
};

/** What the pages show of a project's spending (one ledger read over the last 7 days). */
export async function projectSpending(
  deps: { store: Pick<Store, "ledger">; clock: Clock },
  project: ProjectRecord,
): Promise<Spending> {
  const now = deps.clock.now();
  const today = startOfUtcDay(now).toISOString().slice(0, 10);
  const spent = await deps.store.ledger.spentSince(project.id, new Date(now.getTime() - RATE_DAYS * DAY_MS));
  const dailyRate = spent / RATE_DAYS;
  const threshold = project.lowBalanceThreshold;
  return {
    dailyCreditCap: project.dailyCreditCap,
    usedToday: project.dailyCredits.day === today ? project.dailyCredits.used : 0,
    lowBalanceThreshold: threshold,
    lowBalance: threshold !== null && project.creditBalance < threshold,
    dailyRate,
    daysLeft: dailyRate > 0 ? Math.floor((project.creditBalance / dailyRate) * 10) / 10 : null,
  };
}

function checkLimit(value: number | null, max: number): boolean {
  return value === null || (Number.isInteger(value) && value >= 1 && value <= max);
}

/** An account holder's view of their project's spending (every project page's low-balance banner). */
export async function ownProjectSpending(
  deps: { store: Pick<Store, "projects" | "ledger">; clock: Clock },
  input: { viewer: AccountViewer; projectId: string },
): Promise<{ ok: true; project: ProjectRecord; spending: Spending } | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  return { ok: true, project, spending: await projectSpending(deps, project) };
}

export type SetSpendingResult = { ok: true; project: ProjectRecord; spending: Spending } | DashboardRefusal;

/** The owner sets the daily credit cap and the low-balance threshold (null: none). Audited. */
export async function setProjectSpending(
  deps: { store: Store; clock: Clock },
  input: {
    viewer: AccountViewer;
    projectId: string;
    dailyCreditCap: number | null;
    lowBalanceThreshold: number | null;
  },
): Promise<SetSpendingResult> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  if (!checkLimit(input.dailyCreditCap, MAX_DAILY_CREDIT_CAP))
    return { ok: false, code: "invalid_input", field: "cap" };
  if (!checkLimit(input.lowBalanceThreshold, MAX_LOW_BALANCE_THRESHOLD))
    return { ok: false, code: "invalid_input", field: "threshold" };
  const now = deps.clock.now();
  return deps.store.transaction(async (tx): Promise<SetSpendingResult> => {
    await tx.projects.setSpending(
      project.id,
      { dailyCreditCap: input.dailyCreditCap, lowBalanceThreshold: input.lowBalanceThreshold },
      now,
    );
    await tx.audit.write({
      actor: input.viewer.actor,
      action: "project.spending_set",
      projectId: project.id,
      details: { daily_credit_cap: input.dailyCreditCap, low_balance_threshold: input.lowBalanceThreshold },
      now,
    });
    const updated = await tx.projects.find(project.id);
    return updated
      ? { ok: true, project: updated, spending: await projectSpending({ ...deps, store: tx }, updated) }
      : PROJECT_NOT_FOUND;
  });
}
