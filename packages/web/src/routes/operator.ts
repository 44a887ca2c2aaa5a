// The operator's pages: find and act on a project, decide sender requests,
// read the audit log. The same procedures the operator's tools call.
import { redirect } from "../kit/http.ts";
import type { PageRoute, PageState } from "../port.ts";
import { noticeFrom } from "../views/layout.ts";
import {
  operatorAuditPage,
  operatorHomePage,
  operatorKeyPage,
  operatorProjectPage,
  operatorProjectPath,
  operatorRevokeConfirmPage,
} from "../views/operator.ts";
import { actionRefusedPage, badRequestPage, notFoundPage } from "../views/problems.ts";
import {
  type DashboardContext,
  emptyToUndefined,
  looksLikeWholeKey,
  NOTICES,
  type PageContext,
  param,
} from "./context.ts";
import { limitOf } from "./spending.ts";

const refused = <S extends PageState>(
  context: PageContext<S>,
  title: string,
  message: string,
  back: string,
) => actionRefusedPage(context.chrome, { title, message, back: { href: back, label: "Back" } });
const projectBack = <S extends PageState>(context: PageContext<S>) =>
  operatorProjectPath(param(context, "project_id"));

/** How many of the latest audit entries the operator's home shows. */
const LATEST_ACTIONS = 10;

/** The operator's home (search, waiting requests, the latest actions) and one project. */
function reads<S extends PageState>({ route, port }: DashboardContext<S>) {
  /** The home page; with the results of a search when `query` is given (never from the URL: L3). */
  async function homePage(context: PageContext<S>, query: string): Promise<Response> {
    const { procedures, chrome, url } = context;
    const requestsCursor = emptyToUndefined(url.searchParams.get("requests"));
    const [found, requests, audit] = await Promise.all([
      query ? procedures.operator.projects.find({ query: query.slice(0, 300) }) : Promise.resolve(null),
      procedures.operator.senderRequests.list({ ...(requestsCursor ? { cursor: requestsCursor } : {}) }),
      procedures.operator.audit.list({}),
    ]);
    return operatorHomePage(chrome, {
      // A pasted whole API key is never written back into the page.
      query: looksLikeWholeKey(query) ? "" : query,
      found: found?.ok ? found : null,
      problem: found && !found.ok ? found.message : null,
      requests,
      requestsFirst: !requestsCursor,
      notice: noticeFrom(url, NOTICES),
      brandsConfigured: port.config.brandsConfigured,
      latest: audit.ok ? audit.entries.slice(0, LATEST_ACTIONS) : [],
    });
  }

  const home = route("GET", "/dashboard/operator", "operator", (context) => homePage(context, ""));
  // A search is a POST: what was searched for (perhaps a pasted key) never sits in a URL or the history.
  const search = route("POST", "/dashboard/operator/search", "operator", (context) =>
    homePage(context, (context.form.get("q") ?? "").trim()),
  );

  const project = route("GET", "/dashboard/operator/projects/{project_id}", "operator", async (context) => {
    const described = await context.procedures.operator.projects.get({
      project_id: param(context, "project_id"),
    });
    if (!described.ok) {
      if (described.code === "project_not_found" || described.code === "invalid_input")
        return notFoundPage(context.chrome);
      return badRequestPage(context.chrome, described.message);
    }
    return operatorProjectPage(context.chrome, {
      described,
      notice: noticeFrom(context.url, NOTICES),
      defaultSender: port.config.defaultSender,
    });
  });
  return [home, search, project];
}

/** Suspend, reinstate, grant paid credits, set the daily credit cap, create a live key. */
function projectActions<S extends PageState>({ route, port }: DashboardContext<S>) {
  function suspension(kind: "suspend" | "reinstate"): PageRoute<S> {
    return route("POST", `/dashboard/operator/projects/{project_id}/${kind}`, "operator", async (context) => {
      const projectId = param(context, "project_id");
      const reason = context.form.get("reason") ?? "";
      const input = { project_id: projectId, ...(reason.trim() ? { reason: reason.slice(0, 1000) } : {}) };
      const projects = context.procedures.operator.projects;
      const result = kind === "suspend" ? await projects.suspend(input) : await projects.reinstate(input);
      if (!result.ok) return refused(context, "Nothing changed", result.message, projectBack(context));
      const notices =
        kind === "suspend" ? ["suspended", "already_suspended"] : ["reinstated", "already_active"];
      return redirect(`${projectBack(context)}?notice=${result.changed ? notices[0] : notices[1]}`);
    });
  }

  const grantCredits = route(
    "POST",
    "/dashboard/operator/projects/{project_id}/credits",
    "operator",
    async (context) => {
      const amountText = (context.form.get("amount") ?? "").trim();
      const reference = (context.form.get("reference") ?? "").trim();
      const title = "No credits were granted";
      if (!/^[0-9]{1,9}$/.test(amountText))
        return refused(context, title, port.invalidFieldText("amount"), projectBack(context));
      const result = await context.procedures.operator.credits.grant({
        project_id: param(context, "project_id"),
        amount: Number(amountText),
        ...(reference ? { reference: reference.slice(0, 300) } : {}),
      });
      if (!result.ok) return refused(context, title, result.message, projectBack(context));
      const notice = result.already_granted ? "credits_already_granted" : "credits_granted";
      return redirect(`${projectBack(context)}?notice=${notice}`);
    },
  );

  const dailyCap = route(
    "POST",
    "/dashboard/operator/projects/{project_id}/daily-cap",
    "operator",
    async (context) => {
      const cap = limitOf((context.form.get("daily_credit_cap") ?? "").slice(0, 20));
      const title = "The daily credit cap was not changed";
      if (cap === "invalid")
        return refused(
          context,
          title,
          "The daily credit cap must be a whole number from 1 to 1,000,000, or empty for no cap.",
          projectBack(context),
        );
      const result = await context.procedures.operator.projects.setDailyCreditCap({
        project_id: param(context, "project_id"),
        cap,
      });
      if (!result.ok) return refused(context, title, result.message, projectBack(context));
      const notice = result.daily_credit_cap === null ? "daily_cap_cleared" : "daily_cap_set";
      return redirect(`${projectBack(context)}?notice=${notice}`);
    },
  );

  const createKey = route(
    "POST",
    "/dashboard/operator/projects/{project_id}/keys/live",
    "operator",
    async (context) => {
      const projectId = param(context, "project_id");
      const result = await context.procedures.operator.keys.createLive({ project_id: projectId });
      if (!result.ok)
        return refused(context, "No live key was created", result.message, projectBack(context));
      return operatorKeyPage(context.chrome, { projectId, key: result.key });
    },
  );
  return [suspension("suspend"), suspension("reinstate"), grantCredits, dailyCap, createKey];
}

/** Revoking a key (any project's). */
function keyActions<S extends PageState>({ route }: DashboardContext<S>) {
  const confirmRevoke = route(
    "GET",
    "/dashboard/operator/keys/{key_id}/revoke",
    "operator",
    async (context) => {
      const projectId = (context.url.searchParams.get("project") ?? "").slice(0, 40);
      const found = await context.procedures.operator.keys.get({
        project_id: projectId,
        key_id: param(context, "key_id").slice(0, 40),
      });
      if (!found.ok) return notFoundPage(context.chrome);
      if (found.key.revoked_at)
        return redirect(`${operatorProjectPath(projectId)}?notice=key_already_revoked`);
      return operatorRevokeConfirmPage(context.chrome, { projectId, key: found.key });
    },
  );

  const revoke = route("POST", "/dashboard/operator/keys/{key_id}/revoke", "operator", async (context) => {
    const projectId = (context.form.get("project") ?? "").slice(0, 40);
    const result = await context.procedures.operator.keys.revoke({
      key_id: param(context, "key_id"),
      ...(projectId ? { project_id: projectId } : {}),
    });
    if (!result.ok) return refused(context, "The key was not revoked", result.message, "/dashboard/operator");
    const notice = result.already_revoked ? "key_already_revoked" : "key_revoked";
    return redirect(`${operatorProjectPath(result.project_id)}?notice=${notice}`);
  });

  return [confirmRevoke, revoke];
}

export function operatorRoutes<S extends PageState>(context: DashboardContext<S>) {
  return [
    ...reads(context),
    ...projectActions(context),
    ...keyActions(context),
    ...senderRequestRoutes(context.route),
    audit(context.route),
  ];
}

type Route<S extends PageState> = DashboardContext<S>["route"];

function senderRequestRoutes<S extends PageState>(route: Route<S>) {
  const back = "/dashboard/operator";

  const approve = route(
    "POST",
    "/dashboard/operator/sender-requests/{request_id}/approve",
    "operator",
    async (context) => {
      const brandText = (context.form.get("brand_id") ?? "").trim();
      if (brandText !== "" && !/^[0-9]{1,9}$/.test(brandText))
        return refused(context, "Not approved", "The brand id must be a whole number.", back);
      const result = await context.procedures.operator.senderRequests.approve({
        request_id: param(context, "request_id"),
        ...(brandText ? { brand_id: Number(brandText) } : {}),
      });
      if (!result.ok) return refused(context, "Not approved", result.message, back);
      return redirect("/dashboard/operator?notice=sender_approved");
    },
  );

  const refuse = route(
    "POST",
    "/dashboard/operator/sender-requests/{request_id}/refuse",
    "operator",
    async (context) => {
      const result = await context.procedures.operator.senderRequests.refuse({
        request_id: param(context, "request_id"),
        reason: (context.form.get("reason") ?? "").slice(0, 1000),
      });
      if (!result.ok) return refused(context, "Not refused", result.message, back);
      return redirect("/dashboard/operator?notice=sender_refused");
    },
  );

  return [approve, refuse];
}

function audit<S extends PageState>(route: Route<S>) {
  return route("GET", "/dashboard/operator/audit", "operator", async ({ procedures, chrome, url }) => {
    const projectId = emptyToUndefined(url.searchParams.get("project")?.trim() ?? null);
    const cursor = emptyToUndefined(url.searchParams.get("cursor"));
    const page = await procedures.operator.audit.list({
      ...(projectId ? { project_id: projectId.slice(0, 40) } : {}),
      ...(cursor ? { cursor } : {}),
    });
    if (!page.ok) return badRequestPage(chrome, page.message);
    return operatorAuditPage(chrome, { audit: page, projectId: projectId ?? null, isFirst: !cursor });
  });
}
