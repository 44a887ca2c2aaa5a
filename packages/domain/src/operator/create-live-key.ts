// Operator: a live key for a claimed project (spec 1.3, 1.7). The key is
// returned once and stored only as its SHA-256 hash.
import { mintApiKey } from "../auth/mint-api-key.ts";
import {
  checkCommon,
  type OperatorDeps,
  type OperatorInput,
  type OperatorRefusal,
  projectNotFound,
} from "./operator-support.ts";

export type CreateLiveKeyResult =
  | {
      ok: true;
      projectId: string;
      keyId: string;
      prefix: string;
      /** Shown once; never stored. */
      apiKey: string;
      createdAt: Date;
    }
  | OperatorRefusal;

export async function createLiveKey(
  deps: OperatorDeps,
  input: OperatorInput & { projectId: string },
): Promise<CreateLiveKeyResult> {
  const refused = checkCommon(input, input.projectId);
  if (refused) return refused;
  const { projectId } = input;
  const now = deps.clock.now();
  const { apiKey, keyHash, prefix, keyId } = mintApiKey("live", now);

  return deps.store.transaction(async (tx): Promise<CreateLiveKeyResult> => {
    const project = await tx.projects.lock(projectId);
    if (!project) return projectNotFound(projectId);
    if (!project.claimedAt) return { ok: false, code: "project_not_claimed", projectId };
    if (project.suspendedAt) return { ok: false, code: "project_suspended", projectId };
    await tx.keys.create({ id: keyId, projectId, mode: "live", keyHash, prefix, now });
    await tx.audit.write({
      actor: input.actor,
      action: "api_key.created",
      projectId,
      details: { key_id: keyId, mode: "live" },
      now,
    });
    return { ok: true, projectId, keyId, prefix, apiKey, createdAt: now };
  });
}
