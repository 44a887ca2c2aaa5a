// An account holder's API keys: the list (prefixes, never keys), a live key
// for a claimed, active project (createLiveKey: shown once, only its hash
// stored), revoking one of the project's keys (revokeApiKey), and rolling the
// test key (a new one shown once, the old ones revoked, in one transaction).
// A suspended project gets no new key and no sender request; revoking a key
// (which only takes access away) stays possible.
// Every change writes the same audit row as the operator's tool.
import { isId } from "@sms/crypto";
import { mintApiKey } from "../auth/mint-api-key.ts";
import { checkCommon, type OperatorDeps, type OperatorRefusal } from "../operator/operator-support.ts";
import { type CreateLiveKeyResult, createLiveKey } from "../operator/create-live-key.ts";
import { findProjectKey } from "../operator/project-key.ts";
import { type RevokeApiKeyResult, revokeApiKey } from "../operator/revoke-api-key.ts";
import type { KeyRecord, ProjectRecord, Store } from "../store/index.ts";
import type { Cursor } from "../store/message-log.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";
import { type Page, pageOf } from "./paging.ts";

export async function listProjectKeys(
  deps: { store: Pick<Store, "projects" | "keys"> },
  input: { viewer: AccountViewer; projectId: string; after: Cursor | null; limit: number },
): Promise<({ ok: true; project: ProjectRecord } & Page<KeyRecord, Cursor>) | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const rows = await deps.store.keys.listPage(project.id, input.after, input.limit + 1);
  return {
    ok: true,
    project,
    ...pageOf(rows, input.limit, (row) => ({ createdAt: row.createdAt, id: row.id })),
  };
}

/** One of the project's keys (a revoke confirmation shows it); another project's key is not found. */
export async function projectKey(
  deps: { store: Pick<Store, "projects" | "keys"> },
  input: { viewer: AccountViewer; projectId: string; keyId: string },
): Promise<{ ok: true; key: KeyRecord } | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  return findProjectKey(deps, { projectId: project.id, keyId: input.keyId });
}

export async function createProjectLiveKey(
  deps: OperatorDeps,
  input: { viewer: AccountViewer; projectId: string; name?: string },
): Promise<CreateLiveKeyResult | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  return createLiveKey(deps, {
    actor: input.viewer.actor,
    projectId: project.id,
    ...(input.name ? { name: input.name } : {}),
  });
}

export async function revokeProjectKey(
  deps: OperatorDeps,
  input: { viewer: AccountViewer; projectId: string; keyId: string },
): Promise<RevokeApiKeyResult | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  if (!isId("key", input.keyId)) return { ok: false, code: "invalid_input", field: "key_id" };
  // Scoped to the project: another project's key is "not found".
  return revokeApiKey(deps, { actor: input.viewer.actor, keyId: input.keyId, projectId: project.id });
}

export type RollTestKeyResult =
  | {
      ok: true;
      projectId: string;
      keyId: string;
      prefix: string;
      /** Shown once; never stored. */
      apiKey: string;
      /** The test keys this revoked. */
      revoked: Array<{ keyId: string; prefix: string }>;
    }
  | OperatorRefusal
  | DashboardRefusal;

export async function rollTestKey(
  deps: OperatorDeps,
  input: { viewer: AccountViewer; projectId: string },
): Promise<RollTestKeyResult> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const refused = checkCommon({ actor: input.viewer.actor }, project.id);
  if (refused) return refused;
  const now = deps.clock.now();
  const { apiKey, keyHash, prefix, keyId } = mintApiKey("test", now);
  return deps.store.transaction(async (tx): Promise<RollTestKeyResult> => {
    // The project row lock serialises two rolls: the second revokes the first's new key.
    const locked = await tx.projects.lock(project.id);
    if (!locked) return PROJECT_NOT_FOUND;
    // A suspended project gets no new key (the owner may still revoke one).
    if (locked.suspendedAt) return { ok: false, code: "project_suspended", projectId: project.id };
    const old = await tx.keys.activeOfMode(project.id, "test");
    await tx.keys.create({ id: keyId, projectId: project.id, mode: "test", keyHash, prefix, now });
    for (const key of old) await tx.keys.revoke(key.id, now);
    await tx.audit.write({
      actor: input.viewer.actor,
      action: "test_key.rolled",
      projectId: project.id,
      details: { key_id: keyId, revoked_key_ids: old.map((key) => key.id) },
      now,
    });
    return {
      ok: true,
      projectId: project.id,
      keyId,
      prefix,
      apiKey,
      revoked: old.map((key) => ({ keyId: key.id, prefix: key.prefix })),
    };
  });
}
