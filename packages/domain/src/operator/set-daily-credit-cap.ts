// Operator: set (or clear, with null) a project's daily credit cap, as the
// owner can on the dashboard. Audited as project.spending_set.
import { MAX_DAILY_CREDIT_CAP } from "../dashboard/spending.ts";
import {
  checkCommon,
  invalid,
  type OperatorDeps,
  type OperatorInput,
  type OperatorRefusal,
  projectNotFound,
} from "./operator-support.ts";

export type SetDailyCreditCapResult =
  | { ok: true; projectId: string; dailyCreditCap: number | null }
  | OperatorRefusal;

export async function setDailyCreditCap(
  deps: OperatorDeps,
  input: OperatorInput & { projectId: string; cap: number | null },
): Promise<SetDailyCreditCapResult> {
  const refused = checkCommon(input, input.projectId);
  if (refused) return refused;
  const { cap, projectId } = input;
  if (cap !== null && !(Number.isInteger(cap) && cap >= 1 && cap <= MAX_DAILY_CREDIT_CAP))
    return invalid("cap");
  const now = deps.clock.now();
  return deps.store.transaction(async (tx): Promise<SetDailyCreditCapResult> => {
    const project = await tx.projects.lock(projectId);
    if (!project) return projectNotFound(projectId);
    await tx.projects.setDailyCreditCap(projectId, cap, now);
    await tx.audit.write({
      actor: input.actor,
      action: "project.spending_set",
      projectId,
      details: { daily_credit_cap: cap },
      now,
    });
    return { ok: true, projectId, dailyCreditCap: cap };
  });
}
