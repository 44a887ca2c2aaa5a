// What every account holder's dashboard action shares: the project must be
// one of the account's own. Another account's project and a project that does
// not exist are the same answer, so neither can be told from the other.
import { isId } from "@sms/crypto";
import type { ProjectRecord, Store } from "../store/index.ts";

/** The signed-in account holder: their account (null until they claim a project) and who acts. */
export type AccountViewer = { accountId: string | null; actor: string };

export type DashboardField =
  | "project_id"
  | "key_id"
  | "message_id"
  | "sender_name"
  | "purpose"
  | "filter"
  | "search"
  | "cap"
  | "threshold"
  | "key_name"
  | "project_name";

export type DashboardRefusal =
  | { ok: false; code: "project_not_found" }
  | { ok: false; code: "message_not_found" }
  | { ok: false; code: "key_not_found" }
  | { ok: false; code: "request_not_found" }
  | { ok: false; code: "invalid_input"; field: DashboardField };

export const PROJECT_NOT_FOUND: DashboardRefusal = { ok: false, code: "project_not_found" };

/** The project, when it belongs to the viewer's account. */
export async function ownedProject(
  store: Pick<Store, "projects">,
  viewer: AccountViewer,
  projectId: string,
): Promise<ProjectRecord | null> {
  if (viewer.accountId === null || !isId("prj", projectId)) return null;
  return store.projects.findForAccount(projectId, viewer.accountId);
}
