// A project's verifications log (issue 22).
import type { PageState } from "../port.ts";
import { verificationsPage } from "../views/verifications.ts";
import { type DashboardContext, emptyToUndefined, param } from "./context.ts";

export function verificationRoutes<S extends PageState>({ route }: DashboardContext<S>) {
  const list = route("GET", "/dashboard/projects/{project_id}/verifications", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const cursor = emptyToUndefined(context.url.searchParams.get("cursor"));
    const found = await context.procedures.dashboard.verifications.list({
      project_id: projectId,
      ...(cursor ? { cursor } : {}),
    });
    return verificationsPage(context.chrome, { projectId, list: found, isFirst: !cursor });
  });
  return [list];
}
