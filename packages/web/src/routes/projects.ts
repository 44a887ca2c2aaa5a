// The account holder's projects: the list and one project's overview.
import type { PageState } from "../port.ts";
import { consoleOverview } from "../views/console-overview.ts";
import { projectsPage, overviewPage } from "../views/projects.ts";
import { type DashboardContext, emptyToUndefined, param } from "./context.ts";

export function projectRoutes<S extends PageState>({ route, port }: DashboardContext<S>) {
  const projects = route("GET", "/dashboard/projects", "viewer", async ({ procedures, chrome, url }) => {
    const cursor = emptyToUndefined(url.searchParams.get("cursor"));
    const list = await procedures.dashboard.projects.list({ ...(cursor ? { cursor } : {}) });
    return projectsPage(chrome, list, { isFirst: !cursor });
  });

  const overview = route("GET", "/dashboard/projects/{project_id}", "viewer", async (context) => {
    const { procedures, chrome, url } = context;
    const projectId = param(context, "project_id");
    const mode = url.searchParams.get("mode");
    const chosen = mode === "live" || mode === "test" ? mode : null;
    const [found, usage, conversion, onboarding] = await Promise.all([
      procedures.dashboard.projects.get({ project_id: projectId }),
      procedures.dashboard.projects.usage({ project_id: projectId, ...(chosen ? { mode: chosen } : {}) }),
      procedures.dashboard.verifications.conversion({ project_id: projectId }),
      procedures.dashboard.projects.onboarding({ project_id: projectId }),
    ]);
    return overviewPage(chrome, found, usage, {
      mode: chosen,
      defaultSender: port.config.defaultSender,
      conversion,
      console: consoleOverview(projectId, onboarding),
    });
  });

  return [projects, overview];
}
