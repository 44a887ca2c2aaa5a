// A project's name (docs/dashboard.md#settings): the owner calls it what they
// like, 1–64 characters, shown in the project list and the header of its
// pages; an empty name removes it. Only the account that claimed the project
// may name it (another account's project is not found). Audited.

import type { Clock } from "../ports.ts";
import type { ProjectRecord, Store } from "../store/index.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";

/** The longest project name, in characters (an astral character counts once). */
export const PROJECT_NAME_MAX_LENGTH = 64;

/**
 * A typed name as it is stored: trimmed, runs of white space as one space;
 * null for an empty one (no name); "invalid" when it is too long or holds a
 * control character.
 */
export function projectNameOf(text: string): string | null | "invalid" {
  const name = text.trim().replace(/\s+/gu, " ");
  if (name === "") return null;
  if (/\p{Cc}|\p{Cf}/u.test(name)) return "invalid";
  return [...name].length > PROJECT_NAME_MAX_LENGTH ? "invalid" : name;
}

export type SetProjectNameResult = { ok: true; project: ProjectRecord } | DashboardRefusal;

/** The owner names their project (an empty name removes it). */
export async function setProjectName(
  deps: { store: Store; clock: Clock },
  input: { viewer: AccountViewer; projectId: string; name: string },
): Promise<SetProjectNameResult> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const name = projectNameOf(input.name);
  if (name === "invalid") return { ok: false, code: "invalid_input", field: "project_name" };
  if (name === project.name) return { ok: true, project };
  const now = deps.clock.now();
  return deps.store.transaction(async (tx): Promise<SetProjectNameResult> => {
    await tx.projects.setName(project.id, name, now);
    await tx.audit.write({
      actor: input.viewer.actor,
      action: "project.named",
      projectId: project.id,
      details: { name },
      now,
    });
    const updated = await tx.projects.find(project.id);
    return updated ? { ok: true, project: updated } : PROJECT_NOT_FOUND;
  });
}
