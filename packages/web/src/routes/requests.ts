// The developer console's request log, one request, and the project search box.
import type { RequestFilters } from "@sms/contract";
import { filterDayRule, isFilterDay } from "@sms/domain/model";
import { redirect } from "../kit/http.ts";
import type { PageState } from "../port.ts";
import { projectPath } from "../views/layout.ts";
import { badRequestPage } from "../views/problems.ts";
import {
  REQUEST_ROUTES,
  requestPage,
  requestsPage,
  searchResultsPage,
  searchWholeKeyPage,
} from "../views/requests.ts";
import { verificationHref } from "../views/verifications.ts";
import { type DashboardContext, emptyToUndefined, looksLikeWholeKey, param } from "./context.ts";

function filtersOf(url: URL): RequestFilters | { invalid: string } {
  const pick = <T extends string>(name: string, allowed: readonly T[]): T | undefined => {
    const value = emptyToUndefined(url.searchParams.get(name));
    return value !== undefined && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
  };
  const from = emptyToUndefined(url.searchParams.get("from"));
  const to = emptyToUndefined(url.searchParams.get("to"));
  if (from !== undefined && !isFilterDay(from)) return { invalid: "from" };
  if (to !== undefined && !isFilterDay(to)) return { invalid: "to" };
  const errorCode = emptyToUndefined(url.searchParams.get("error_code")?.trim() ?? null);
  if (errorCode !== undefined && !/^[a-z_]{1,64}$/.test(errorCode)) return { invalid: "error_code" };
  const filters = {
    status_class: pick("status_class", ["2xx", "4xx", "5xx"] as const),
    error_code: errorCode,
    route: pick("route", REQUEST_ROUTES),
    mode: pick("mode", ["live", "test"] as const),
    from,
    to,
  };
  return Object.fromEntries(
    Object.entries(filters).filter(([, value]) => value !== undefined),
  ) as RequestFilters;
}

export function requestRoutes<S extends PageState>({ route, port }: DashboardContext<S>) {
  const list = route("GET", "/dashboard/projects/{project_id}/requests", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const filters = filtersOf(context.url);
    if ("invalid" in filters) {
      const text =
        filters.invalid === "error_code"
          ? "The error code filter is a code such as invalid_variables."
          : filterDayRule(filters.invalid);
      return badRequestPage(context.chrome, text);
    }
    const cursor = emptyToUndefined(context.url.searchParams.get("cursor"));
    const found = await context.procedures.dashboard.requests.list({
      project_id: projectId,
      ...filters,
      ...(cursor ? { cursor } : {}),
    });
    return requestsPage(context.chrome, {
      projectId,
      list: found,
      filters,
      isFirst: !cursor,
      retentionDays: port.config.requestLogRetentionDays,
    });
  });

  const one = route(
    "GET",
    "/dashboard/projects/{project_id}/requests/{request_id}",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const found = await context.procedures.dashboard.requests.get({
        project_id: projectId,
        request_id: param(context, "request_id"),
      });
      return requestPage(context.chrome, { projectId, request: found.request });
    },
  );

  // The search box: an id opens its page; an Idempotency-Key lists its requests. A POST: what was
  // searched for (perhaps a pasted key) never sits in a URL, the history or an access log line.
  const search = route("POST", "/dashboard/projects/{project_id}/search", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const query = (context.form.get("q") ?? "").trim();
    // A control character (a NUL is one PostgreSQL's text cannot hold) is in no id and no header's key.
    if (query === "" || query.length > 255 || /\p{Cc}/u.test(query)) {
      return badRequestPage(
        context.chrome,
        "The search (“q”) takes a message id (msg_…), a request id (req_…), a verification id (vrf_…) or an Idempotency-Key: at most 255 characters, no control characters.",
      );
    }
    // A whole key, or most of one: not searched for, and written nowhere in the answer.
    if (looksLikeWholeKey(query)) return searchWholeKeyPage(context.chrome, { projectId });
    const found = await context.procedures.dashboard.search({ project_id: projectId, query });
    switch (found.kind) {
      case "message":
        return redirect(projectPath(projectId, `/messages/${encodeURIComponent(found.id)}`));
      case "request":
        return redirect(projectPath(projectId, `/requests/${encodeURIComponent(found.id)}`));
      case "verification":
        // Its row in the verifications log (there is no page per verification yet).
        return redirect(verificationHref(projectId, found.id));
      case "idempotency_key":
        return searchResultsPage(context.chrome, { projectId, query, requests: found.requests });
      case "not_found":
        return searchResultsPage(context.chrome, { projectId, query, requests: null });
      case "whole_key_given":
        return searchWholeKeyPage(context.chrome, { projectId });
    }
  });

  return [list, one, search];
}
