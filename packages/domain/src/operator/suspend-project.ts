// Operator: suspend and reinstate a project (spec 5.4: a suspended project
// answers 403 project_suspended). Both are idempotent. The API's key cache
// (API_KEY_CACHE_TTL_MS) delays the effect by at most that long.
import {
  checkCommon,
  invalid,
  type OperatorDeps,
  type OperatorInput,
  type OperatorRefusal,
  projectNotFound,
} from "./operator-support.ts";

export type SuspensionResult =
  | {
      ok: true;
      projectId: string;
      suspendedAt: Date | null;
      /** False when it already was in that state. */
      changed: boolean;
    }
  | OperatorRefusal;

export const MAX_REASON_LENGTH = 500;

type SuspensionInput = OperatorInput & { projectId: string; reason?: string };

async function setSuspension(
  deps: OperatorDeps,
  input: SuspensionInput,
  suspend: boolean,
): Promise<SuspensionResult> {
  const refused = checkCommon(input, input.projectId);
  if (refused) return refused;
  const reason = input.reason?.trim();
  if (reason !== undefined && (reason === "" || reason.length > MAX_REASON_LENGTH)) return invalid("reason");
  const { projectId } = input;
  const now = deps.clock.now();
  return deps.store.transaction(async (tx): Promise<SuspensionResult> => {
    const project = await tx.projects.lock(projectId);
    if (!project) return projectNotFound(projectId);
    const changed = suspend ? project.suspendedAt === null : project.suspendedAt !== null;
    const suspendedAt = suspend ? (project.suspendedAt ?? now) : null;
    if (changed) await tx.projects.setSuspendedAt(projectId, suspendedAt, now);
    await tx.audit.write({
      actor: input.actor,
      action: suspend ? "project.suspended" : "project.reinstated",
      projectId,
      details: { changed, ...(reason ? { reason } : {}) },
      now,
    });
    return { ok: true, projectId, suspendedAt, changed };
  });
}

export function suspendProject(deps: OperatorDeps, input: SuspensionInput): Promise<SuspensionResult> {
  return setSuspension(deps, input, true);
}

export function reinstateProject(deps: OperatorDeps, input: SuspensionInput): Promise<SuspensionResult> {
  return setSuspension(deps, input, false);
}
