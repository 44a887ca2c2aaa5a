// A project's messages: the filtered list and one message.
import { MESSAGE_STATUSES } from "@sms/domain";
import { TEMPLATE_IDS } from "@sms/templates";
import type { PageState } from "../port.ts";
import type { MessageFilters } from "../records.ts";
import { messagePage, messagesPage } from "../views/messages.ts";
import { type DashboardContext, emptyToUndefined, param } from "./context.ts";

/** The list's filters from the query: unknown values are dropped, not refused. */
function filtersOf(url: URL): MessageFilters {
  const pick = <T extends string>(name: string, allowed: readonly T[]): T | undefined => {
    const value = emptyToUndefined(url.searchParams.get(name));
    return value !== undefined && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
  };
  const day = (name: string) => {
    const value = emptyToUndefined(url.searchParams.get(name));
    return value && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)) ? value : undefined;
  };
  const filters = {
    status: pick("status", MESSAGE_STATUSES),
    mode: pick("mode", ["live", "test"] as const),
    template: pick("template", TEMPLATE_IDS),
    from: day("from"),
    to: day("to"),
  };
  return Object.fromEntries(
    Object.entries(filters).filter(([, value]) => value !== undefined),
  ) as MessageFilters;
}

export function messageRoutes<S extends PageState>({ route }: DashboardContext<S>) {
  const list = route("GET", "/dashboard/projects/{project_id}/messages", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const filters = filtersOf(context.url);
    const cursor = emptyToUndefined(context.url.searchParams.get("cursor"));
    const found = await context.procedures.dashboard.messages.list({
      project_id: projectId,
      ...filters,
      ...(cursor ? { cursor } : {}),
    });
    return messagesPage(context.chrome, { projectId, list: found, filters, isFirst: !cursor });
  });

  const one = route(
    "GET",
    "/dashboard/projects/{project_id}/messages/{message_id}",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const found = await context.procedures.dashboard.messages.get({
        project_id: projectId,
        message_id: param(context, "message_id"),
      });
      return messagePage(context.chrome, { projectId, found });
    },
  );

  return [list, one];
}
