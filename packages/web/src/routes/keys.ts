// A project's API keys: list, create a live key, revoke one, roll the test key.
// A key or project that is not found is a value in the procedures' answers,
// shown as the 404 page.
import type { Refusal } from "@sms/contract";
import { redirect } from "../kit/http.ts";
import type { PageState } from "../port.ts";
import { keysPage, newKeyPage, revokeConfirmPage, rollConfirmPage } from "../views/keys.ts";
import { noticeFrom, projectPath } from "../views/layout.ts";
import { actionRefusedPage, notFoundPage } from "../views/problems.ts";
import { type DashboardContext, emptyToUndefined, NOTICES, type PageContext, param } from "./context.ts";

const NOT_FOUND = new Set(["project_not_found", "key_not_found", "invalid_input"]);

export function keyRoutes<S extends PageState>({ route }: DashboardContext<S>) {
  /** A refused action: the 404 page when what it names is not there, else its sentence. */
  const refused = (context: PageContext<S>, title: string, refusal: Refusal) =>
    NOT_FOUND.has(refusal.code)
      ? notFoundPage(context.chrome)
      : actionRefusedPage(context.chrome, {
          title,
          message: refusal.message,
          back: { href: projectPath(param(context, "project_id"), "/keys"), label: "Back to the keys" },
        });

  const keys = route("GET", "/dashboard/projects/{project_id}/keys", "viewer", async (context) => {
    const { procedures, chrome, url } = context;
    const cursor = emptyToUndefined(url.searchParams.get("cursor"));
    const list = await procedures.dashboard.keys.list({
      project_id: param(context, "project_id"),
      ...(cursor ? { cursor } : {}),
    });
    return keysPage(chrome, list, { isFirst: !cursor, notice: noticeFrom(url, NOTICES) });
  });

  const createLive = route(
    "POST",
    "/dashboard/projects/{project_id}/keys/live",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const name = (context.form.get("name") ?? "").trim().slice(0, 200);
      const result = await context.procedures.dashboard.keys.createLive({
        project_id: projectId,
        ...(name ? { name } : {}),
      });
      if (!result.ok) return refused(context, "No live key was created", result);
      return newKeyPage(context.chrome, { projectId, key: result.key, revoked: [] });
    },
  );

  const confirmRevoke = route(
    "GET",
    "/dashboard/projects/{project_id}/keys/{key_id}/revoke",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const found = await context.procedures.dashboard.keys.get({
        project_id: projectId,
        key_id: param(context, "key_id").slice(0, 40),
      });
      if (!found.ok) return notFoundPage(context.chrome);
      if (found.key.revoked_at) return redirect(projectPath(projectId, "/keys?notice=key_already_revoked"));
      return revokeConfirmPage(context.chrome, { projectId, key: found.key });
    },
  );

  const revoke = route(
    "POST",
    "/dashboard/projects/{project_id}/keys/{key_id}/revoke",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const result = await context.procedures.dashboard.keys.revoke({
        project_id: projectId,
        key_id: param(context, "key_id"),
      });
      if (!result.ok) return refused(context, "The key was not revoked", result);
      const notice = result.already_revoked ? "key_already_revoked" : "key_revoked";
      return redirect(projectPath(projectId, `/keys?notice=${notice}`));
    },
  );

  const confirmRoll = route(
    "GET",
    "/dashboard/projects/{project_id}/keys/roll-test",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const list = await context.procedures.dashboard.keys.list({ project_id: projectId });
      const testKeys = list.keys.filter((key) => key.mode === "test" && !key.revoked_at);
      return rollConfirmPage(context.chrome, { projectId, testKeys });
    },
  );

  const roll = route("POST", "/dashboard/projects/{project_id}/keys/roll-test", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const result = await context.procedures.dashboard.keys.rollTest({ project_id: projectId });
    if (!result.ok) return refused(context, "The test key was not rolled", result);
    return newKeyPage(context.chrome, { projectId, key: result.key, revoked: result.revoked });
  });

  // The roll route is listed before the key id routes: "roll-test" could also read as a key id.
  return [keys, createLive, confirmRoll, roll, confirmRevoke, revoke];
}
