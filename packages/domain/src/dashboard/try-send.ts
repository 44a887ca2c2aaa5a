// "Send a test message" on the project page: the owner's own project, sent in
// test mode as the project's current test key, through the same use case the
// REST route calls (sendMessage). This only finds who sends: the project as
// the authenticator would present it, and the active test key's id.
import type { AuthenticatedProject } from "../model/keys.ts";
import type { Store } from "../store/index.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";

export type TestSender =
  | { ok: true; project: AuthenticatedProject; keyId: string }
  | { ok: false; code: "project_suspended"; projectId: string }
  | { ok: false; code: "no_test_key" }
  | DashboardRefusal;

export async function dashboardTestSender(
  deps: { store: Pick<Store, "projects" | "keys"> },
  input: { viewer: AccountViewer; projectId: string },
): Promise<TestSender> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  if (project.suspendedAt) return { ok: false, code: "project_suspended", projectId: project.id };
  const key = await deps.store.keys.firstActive(project.id, "test");
  if (!key) return { ok: false, code: "no_test_key" };
  return {
    ok: true,
    project: {
      id: project.id,
      sender: project.sender,
      senderBrandId: project.senderBrandId,
      claimed: project.claimedAt !== null,
    },
    keyId: key.id,
  };
}
