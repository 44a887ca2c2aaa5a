// A project's credits and ledger.
import type { PageState } from "../port.ts";
import { creditsPage } from "../views/credits.ts";
import { type DashboardContext, emptyToUndefined, param } from "./context.ts";

export function creditRoutes<S extends PageState>({ route }: DashboardContext<S>) {
  const credits = route("GET", "/dashboard/projects/{project_id}/credits", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const cursor = emptyToUndefined(context.url.searchParams.get("cursor"));
    const result = await context.procedures.dashboard.credits.get({
      project_id: projectId,
      ...(cursor ? { cursor } : {}),
    });
    return creditsPage(context.chrome, { projectId, credits: result, isFirst: !cursor });
  });
  return [credits];
}
