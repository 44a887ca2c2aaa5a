// Operator: a live key for a claimed project (spec 1.3, 1.7). The key is
// returned once and stored only as its SHA-256 hash.
import { apiKeyPrefix, newApiKey, newId, sha256Hex } from "@sms/crypto";
import {
  type OperatorDeps,
  type OperatorRefusal,
  PROJECT_NOT_FOUND,
  checkCommon,
  refuse,
  writeAuditEntry,
} from "./operator-support.ts";

export type CreateLiveKeyResult =
  | {
      ok: true;
      projectId: string;
      keyId: string;
      prefix: string /** Shown once; never stored. */;
      apiKey: string;
      createdAt: Date;
    }
  | OperatorRefusal;

export async function createLiveKey(
  options: OperatorDeps & { projectId: string },
): Promise<CreateLiveKeyResult> {
  const invalid = checkCommon(options, options.projectId);
  if (invalid) return invalid;
  const { prisma, projectId } = options;
  const now = options.clock.now();
  const apiKey = newApiKey("live");
  const keyHash = await sha256Hex(apiKey);
  const prefix = apiKeyPrefix(apiKey);
  const keyId = newId("key", now.getTime());

  return prisma.$transaction(async (tx): Promise<CreateLiveKeyResult> => {
    const project = await tx.project.findUnique({
      where: { id: projectId },
      select: { claimedAt: true, suspendedAt: true },
    });
    if (!project) return PROJECT_NOT_FOUND(projectId);
    if (!project.claimedAt) {
      return refuse(
        "project_not_claimed",
        `Project ${projectId} has not been claimed: live keys are only for projects a human has claimed in the browser.`,
      );
    }
    if (project.suspendedAt) {
      return refuse(
        "project_suspended",
        `Project ${projectId} is suspended: reinstate it before creating a live key.`,
      );
    }
    await tx.apiKey.create({ data: { id: keyId, projectId, mode: "live", keyHash, prefix, createdAt: now } });
    await writeAuditEntry(tx, {
      actor: options.actor,
      action: "api_key.created",
      projectId,
      details: { key_id: keyId, mode: "live" },
      now,
    });
    return { ok: true, projectId, keyId, prefix, apiKey, createdAt: now };
  });
}
