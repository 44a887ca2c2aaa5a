// Operator: suspend and reinstate a project (spec 5.4: a suspended project
// answers 403 project_suspended). Both are idempotent. The API's key cache
// (API_KEY_CACHE_TTL_MS) delays the effect by at most that long.
import {
  type OperatorDeps,
  type OperatorRefusal,
  PROJECT_NOT_FOUND,
  checkCommon,
  refuse,
  writeAuditEntry,
} from "./operator-support.ts";

export type SuspensionResult =
  | {
      ok: true;
      projectId: string;
      suspendedAt: Date | null /** False when it already was in that state. */;
      changed: boolean;
    }
  | OperatorRefusal;

const MAX_REASON_LENGTH = 500;

async function setSuspension(
  options: OperatorDeps & { projectId: string; reason?: string },
  suspend: boolean,
): Promise<SuspensionResult> {
  const invalid = checkCommon(options, options.projectId);
  if (invalid) return invalid;
  const reason = options.reason?.trim();
  if (reason !== undefined && (reason === "" || reason.length > MAX_REASON_LENGTH)) {
    return refuse("invalid_input", `The reason must be 1–${MAX_REASON_LENGTH} characters.`);
  }
  const { projectId } = options;
  const now = options.clock.now();
  return options.prisma.$transaction(async (tx): Promise<SuspensionResult> => {
    const project = await tx.project.findUnique({ where: { id: projectId }, select: { suspendedAt: true } });
    if (!project) return PROJECT_NOT_FOUND(projectId);
    const changed = suspend ? project.suspendedAt === null : project.suspendedAt !== null;
    const suspendedAt = suspend ? (project.suspendedAt ?? now) : null;
    if (changed) await tx.project.update({ where: { id: projectId }, data: { suspendedAt, updatedAt: now } });
    await writeAuditEntry(tx, {
      actor: options.actor,
      action: suspend ? "project.suspended" : "project.reinstated",
      projectId,
      details: { changed, ...(reason ? { reason } : {}) },
      now,
    });
    return { ok: true, projectId, suspendedAt, changed };
  });
}

export function suspendProject(
  options: OperatorDeps & { projectId: string; reason?: string },
): Promise<SuspensionResult> {
  return setSuspension(options, true);
}

export function reinstateProject(
  options: OperatorDeps & { projectId: string; reason?: string },
): Promise<SuspensionResult> {
  return setSuspension(options, false);
}
