// CSV exports of the message log (masked numbers, the filters shown) and of
// the credit ledger, streamed page by page (kit/csv.ts).
import { filterDayRule } from "@sms/domain/model";
import { csvResponse } from "../kit/csv.ts";
import type { PageState } from "../port.ts";
import { badRequestPage } from "../views/problems.ts";
import { type DashboardContext, param } from "./context.ts";
import { filtersOf } from "./messages.ts";

export function exportRoutes<S extends PageState>({ route }: DashboardContext<S>) {
  const messages = route(
    "GET",
    "/dashboard/projects/{project_id}/messages.csv",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const filters = filtersOf(context.url);
      if ("invalid" in filters) {
        return badRequestPage(context.chrome, filterDayRule(filters.invalid));
      }
      const read = async (cursor?: string) => {
        const page = await context.procedures.dashboard.messages.list({
          project_id: projectId,
          ...filters,
          ...(cursor ? { cursor } : {}),
        });
        return { rows: page.messages, next: page.next };
      };
      return csvResponse({
        filename: `${projectId}-messages.csv`,
        header: [
          "id",
          "created_at",
          "updated_at",
          "mode",
          "to",
          "template",
          "status",
          "segments",
          "error_code",
        ],
        first: await read(),
        next: read,
        cells: (m) => [
          m.id,
          m.created_at,
          m.updated_at,
          m.mode,
          m.to,
          m.template,
          m.status,
          m.segments,
          m.error_code,
        ],
      });
    },
  );

  const ledger = route("GET", "/dashboard/projects/{project_id}/credits.csv", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const read = async (cursor?: string) => {
      const page = await context.procedures.dashboard.credits.get({
        project_id: projectId,
        ...(cursor ? { cursor } : {}),
      });
      return { rows: page.ledger, next: page.next };
    };
    return csvResponse({
      filename: `${projectId}-ledger.csv`,
      header: ["id", "created_at", "kind", "amount", "message_id", "note"],
      first: await read(),
      next: read,
      cells: (e) => [e.id, e.created_at, e.kind, e.amount, e.message_id, e.note],
    });
  });

  return [messages, ledger];
}
