// Operator: a live key for a claimed project (spec 1.3, 1.7). The key is
// returned once and stored only as its SHA-256 hash.
import { mintApiKey } from "../auth/mint-api-key.ts";
import {
  checkCommon,
  invalid,
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

/** A key's name: what the owner calls it, at most this long. */
export const MAX_KEY_NAME_LENGTH = 64;

export async function createLiveKey(
  deps: OperatorDeps,
  input: OperatorInput & { projectId: string; name?: string },
): Promise<CreateLiveKeyResult> {
  const refused = checkCommon(input, input.projectId);
  if (refused) return refused;
  const name = input.name?.trim() || null;
  if (name !== null && (name.length > MAX_KEY_NAME_LENGTH || /[\p{Cc}]/u.test(name)))
    return invalid("key_name");
  const { projectId } = input;
  const now = deps.clock.now();
  const { apiKey, keyHash, prefix, keyId } = mintApiKey("live", now);

  return deps.store.transaction(async (tx): Promise<CreateLiveKeyResult> => {
    const project = await tx.projects.lock(projectId);
    if (!project) return projectNotFound(projectId);
    if (!project.claimedAt) return { ok: false, code: "project_not_claimed", projectId };
    if (project.suspendedAt) return { ok: false, code: "project_suspended", projectId };
    await tx.keys.create({ id: keyId, projectId, mode: "live", keyHash, prefix, now, name });
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
