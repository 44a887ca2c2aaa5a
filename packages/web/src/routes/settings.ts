// A project's settings: the owner names the project (views/settings.ts).
import { html } from "../kit/html.ts";
import { redirect } from "../kit/http.ts";
import type { PageState } from "../port.ts";
import { note, projectPath } from "../views/layout.ts";
import { notFoundPage } from "../views/problems.ts";
import { settingsPage } from "../views/settings.ts";
import { type DashboardContext, param } from "./context.ts";

export function settingsRoutes<S extends PageState>({ route }: DashboardContext<S>) {
  const show = route("GET", "/dashboard/projects/{project_id}/settings", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const { project } = await context.procedures.dashboard.projects.get({ project_id: projectId });
    const saved = context.url.searchParams.get("notice") === "name_saved";
    return settingsPage(context.chrome, {
      projectId,
      name: project.name,
      notice: saved ? note("ok", html`<p>The name was saved.</p>`) : "",
    });
  });

  const save = route("POST", "/dashboard/projects/{project_id}/settings", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    // The form is at most 8 KiB; the procedure takes at most 1,000 characters and the domain judges the rest.
    const typed = (context.form.get("name") ?? "").slice(0, 1000);
    const result = await context.procedures.dashboard.projects.setName({
      project_id: projectId,
      name: typed,
    });
    if (result.ok) return redirect(projectPath(projectId, "/settings?notice=name_saved"));
    if (result.code === "project_not_found") return notFoundPage(context.chrome);
    const { project } = await context.procedures.dashboard.projects.get({ project_id: projectId });
    return settingsPage(
      { ...context.chrome, projectName: project.name },
      { projectId, name: project.name, problem: result.message, typed, status: 400 },
    );
  });

  return [show, save];
}
