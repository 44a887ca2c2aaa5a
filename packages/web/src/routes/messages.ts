// A project's messages: the filtered list and one message.
import type { MessageFilters } from "@sms/contract";
import { filterDayRule, isFilterDay, MESSAGE_STATUSES } from "@sms/domain/model";
import { TEMPLATE_IDS } from "@sms/templates";
import type { PageState } from "../port.ts";
import { messagePage, messagesPage } from "../views/messages.ts";
import { badRequestPage } from "../views/problems.ts";
import { type DashboardContext, emptyToUndefined, param } from "./context.ts";

/**
 * The list's filters from the query: an unknown status, mode or template is
 * dropped; a day that is not one is refused (400 naming the field), as the
 * database could not compare it.
 */
export function filtersOf(url: URL): MessageFilters | { invalid: "from" | "to" } {
  const pick = <T extends string>(name: string, allowed: readonly T[]): T | undefined => {
    const value = emptyToUndefined(url.searchParams.get(name));
    return value !== undefined && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
  };
  const from = emptyToUndefined(url.searchParams.get("from"));
  const to = emptyToUndefined(url.searchParams.get("to"));
  if (from !== undefined && !isFilterDay(from)) return { invalid: "from" };
  if (to !== undefined && !isFilterDay(to)) return { invalid: "to" };
  const filters = {
    status: pick("status", MESSAGE_STATUSES),
    mode: pick("mode", ["live", "test"] as const),
    template: pick("template", TEMPLATE_IDS),
    from,
    to,
  };
  return Object.fromEntries(
    Object.entries(filters).filter(([, value]) => value !== undefined),
  ) as MessageFilters;
}

export function messageRoutes<S extends PageState>({ route }: DashboardContext<S>) {
  const list = route("GET", "/dashboard/projects/{project_id}/messages", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const filters = filtersOf(context.url);
    if ("invalid" in filters) {
      return badRequestPage(context.chrome, filterDayRule(filters.invalid));
    }
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
      const messageId = param(context, "message_id");
      const [found, behind] = await Promise.all([
        context.procedures.dashboard.messages.get({ project_id: projectId, message_id: messageId }),
        context.procedures.dashboard.messages.requests({ project_id: projectId, message_id: messageId }),
      ]);
      return messagePage(context.chrome, {
        projectId,
        found,
        requests: behind.requests,
        watch: context.url.searchParams.get("watch") === "1",
      });
    },
  );

  return [list, one];
}
