// A project's sender name: the page and a request for a name.
import { redirect } from "../kit/http.ts";
import type { PageState } from "../port.ts";
import { noticeFrom, projectPath } from "../views/layout.ts";
import { notFoundPage } from "../views/problems.ts";
import { senderPage } from "../views/sender.ts";
import { type DashboardContext, NOTICES, param } from "./context.ts";

export function senderRoutes<S extends PageState>({ route, port }: DashboardContext<S>) {
  const { defaultSender } = port.config;

  const show = route("GET", "/dashboard/projects/{project_id}/sender", "viewer", async (context) => {
    const found = await context.procedures.dashboard.sender.get({ project_id: param(context, "project_id") });
    return senderPage(context.chrome, {
      sender: found,
      defaultSender,
      notice: noticeFrom(context.url, NOTICES),
    });
  });

  const request = route("POST", "/dashboard/projects/{project_id}/sender", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const values = { name: context.form.get("name") ?? "", purpose: context.form.get("purpose") ?? "" };
    const result = await context.procedures.dashboard.sender.request({
      project_id: projectId,
      name: values.name.slice(0, 40),
      purpose: values.purpose.slice(0, 2000),
    });
    if (result.ok) return redirect(projectPath(projectId, "/sender?notice=sender_requested"));
    if (result.code === "project_not_found") return notFoundPage(context.chrome);
    const found = await context.procedures.dashboard.sender.get({ project_id: projectId });
    return senderPage(context.chrome, {
      sender: found,
      defaultSender,
      notice: "",
      problem: result.message,
      values,
      status: result.code === "invalid_input" ? 400 : 409,
    });
  });

  return [show, request];
}
