// A project's spending limits: the daily credit cap and the low-balance warning.
import { html } from "../kit/html.ts";
import { redirect } from "../kit/http.ts";
import type { PageState } from "../port.ts";
import { note, projectPath } from "../views/layout.ts";
import { notFoundPage } from "../views/problems.ts";
import { spendingPage } from "../views/spending.ts";
import { type DashboardContext, param } from "./context.ts";

/** A form's whole number, null for empty, or "invalid". */
export function limitOf(value: string | null): number | null | "invalid" {
  const text = (value ?? "").trim().replaceAll(",", "");
  if (text === "") return null;
  if (!/^\d{1,9}$/.test(text)) return "invalid";
  return Number(text);
}

export function spendingRoutes<S extends PageState>({ route }: DashboardContext<S>) {
  const show = route("GET", "/dashboard/projects/{project_id}/spending", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const spending = await context.procedures.dashboard.projects.spending({ project_id: projectId });
    const saved = context.url.searchParams.get("notice") === "spending_saved";
    return spendingPage(context.chrome, {
      projectId,
      spending,
      notice: saved ? note("ok", html`<p>The limits were saved.</p>`) : "",
    });
  });

  const save = route("POST", "/dashboard/projects/{project_id}/spending", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const values = {
      cap: (context.form.get("daily_credit_cap") ?? "").slice(0, 20),
      threshold: (context.form.get("low_balance_threshold") ?? "").slice(0, 20),
    };
    const cap = limitOf(values.cap);
    const threshold = limitOf(values.threshold);
    const result =
      cap === "invalid" || threshold === "invalid"
        ? {
            ok: false as const,
            code: "invalid_input",
            message:
              cap === "invalid"
                ? "The daily credit cap must be a whole number from 1 to 1,000,000, or empty for no cap."
                : "The low-balance threshold must be a whole number from 1 to 1,000,000, or empty for no warning.",
          }
        : await context.procedures.dashboard.projects.setSpending({
            project_id: projectId,
            daily_credit_cap: cap,
            low_balance_threshold: threshold,
          });
    if (result.ok) return redirect(projectPath(projectId, "/spending?notice=spending_saved"));
    if (result.code === "project_not_found") return notFoundPage(context.chrome);
    const spending = await context.procedures.dashboard.projects.spending({ project_id: projectId });
    return spendingPage(context.chrome, {
      projectId,
      spending,
      problem: result.message,
      values,
      status: 400,
    });
  });

  return [show, save];
}
