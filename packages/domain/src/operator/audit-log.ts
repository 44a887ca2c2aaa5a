// Operator: the audit log, newest first, paged; all of it or one project's.
import { isId } from "@sms/crypto";
import { type Page, pageOf } from "../dashboard/paging.ts";
import type { AuditEntry } from "../store/index.ts";
import type { Cursor } from "../store/message-log.ts";
import { invalid, type OperatorDeps, type OperatorRefusal } from "./operator-support.ts";

export async function listAuditLog(
  deps: Pick<OperatorDeps, "store">,
  input: { projectId?: string; after: Cursor | null; limit: number },
): Promise<({ ok: true } & Page<AuditEntry, Cursor>) | OperatorRefusal> {
  if (input.projectId !== undefined && !isId("prj", input.projectId)) return invalid("project_id");
  const rows = await deps.store.audit.list({
    projectId: input.projectId ?? null,
    after: input.after,
    limit: input.limit + 1,
  });
  return { ok: true, ...pageOf(rows, input.limit, (row) => ({ createdAt: row.createdAt, id: row.id })) };
}
