// An account holder's verifications: the log (newest first, keyset-paged:
// masked number, status, attempts used, created and approved times, the
// message) and the conversion of the last 30 days (approved / started per UTC
// day, and the median time to approve): the signal that tells real users from
// SMS pumping. Never a code or its hash.
import { DAY_MS, startOfUtcDay } from "../model/time.ts";
import {
  effectiveStatus,
  VERIFICATION_MAX_ATTEMPTS,
  type VerificationState,
  type VerificationStatus,
} from "../model/verification.ts";
import type { Clock } from "../ports.ts";
import type { Cursor, Store } from "../store/index.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";
import { type Page, pageOf } from "./paging.ts";

export type VerificationLogRow = Omit<VerificationState, "status"> & {
  /** As a caller sees it now (a pending one past its lifetime is expired). */
  status: VerificationStatus;
  attemptsUsed: number;
};

export async function listProjectVerifications(
  deps: { store: Pick<Store, "projects" | "verifications">; clock: Clock },
  input: { viewer: AccountViewer; projectId: string; after: Cursor | null; limit: number },
): Promise<({ ok: true } & Page<VerificationLogRow, Cursor>) | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const now = deps.clock.now();
  const rows = await deps.store.verifications.list(project.id, {
    before: input.after,
    limit: input.limit + 1,
  });
  const entries = rows.map((row) => ({
    ...row,
    status: effectiveStatus(row, now),
    attemptsUsed: VERIFICATION_MAX_ATTEMPTS - row.attemptsRemaining,
  }));
  return { ok: true, ...pageOf(entries, input.limit, (row) => ({ createdAt: row.createdAt, id: row.id })) };
}

/** Days shown by the conversion chart. */
export const CONVERSION_DAYS = 30;

export type VerificationConversion = {
  ok: true;
  /** Oldest first, every one of the last 30 UTC days (today included), zeros where nothing started. */
  days: Array<{ day: string; started: number; approved: number; rate: number | null }>;
  started: number;
  approved: number;
  /** Median seconds from start to approval over the 30 days; null when nothing was approved. */
  medianSecondsToApprove: number | null;
};

export async function verificationConversion(
  deps: { store: Pick<Store, "projects" | "verifications">; clock: Clock },
  input: { viewer: AccountViewer; projectId: string },
): Promise<VerificationConversion | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const today = startOfUtcDay(deps.clock.now());
  const since = new Date(today.getTime() - (CONVERSION_DAYS - 1) * DAY_MS);
  const found = await deps.store.verifications.conversion(project.id, since);
  const byDay = new Map(found.days.map((day) => [day.day, day]));
  const days = Array.from({ length: CONVERSION_DAYS }, (_, index) => {
    const day = new Date(since.getTime() + index * DAY_MS).toISOString().slice(0, 10);
    const { started = 0, approved = 0 } = byDay.get(day) ?? {};
    return { day, started, approved, rate: started === 0 ? null : approved / started };
  });
  return {
    ok: true,
    days,
    started: days.reduce((sum, day) => sum + day.started, 0),
    approved: days.reduce((sum, day) => sum + day.approved, 0),
    medianSecondsToApprove: found.medianSecondsToApprove,
  };
}
