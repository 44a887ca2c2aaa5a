// An account holder's messages: the log (newest first, filtered, keyset-paged)
// and one message with its timeline (message_events) and the ledger entries
// it caused. What the API returns of a message and no more: the masked
// number, never the text or the full number (spec 1.8).
import { isId } from "@sms/crypto";
import type { KeyMode } from "../model/keys.ts";
import { MESSAGE_STATUSES, type MessageStatus } from "../model/message.ts";
import type { LedgerEntry, Store } from "../store/index.ts";
import type {
  Cursor,
  MessageDetail,
  MessageEvent,
  MessageLogEntry,
  MessageLogFilter,
} from "../store/message-log.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";
import { type Page, pageOf } from "./paging.ts";

export type MessageFilter = {
  status?: MessageStatus;
  mode?: KeyMode;
  template?: string;
  from?: Date;
  to?: Date;
};

function checkFilter(filter: MessageFilter): MessageLogFilter | null {
  if (filter.status !== undefined && !MESSAGE_STATUSES.includes(filter.status)) return null;
  if (filter.mode !== undefined && filter.mode !== "test" && filter.mode !== "live") return null;
  if (filter.template !== undefined && !/^[a-z_]{1,64}$/.test(filter.template)) return null;
  for (const date of [filter.from, filter.to]) {
    if (date !== undefined && Number.isNaN(date.getTime())) return null;
  }
  return filter;
}

export async function listProjectMessages(
  deps: { store: Pick<Store, "projects" | "messageLog"> },
  input: {
    viewer: AccountViewer;
    projectId: string;
    filter: MessageFilter;
    after: Cursor | null;
    limit: number;
  },
): Promise<({ ok: true } & Page<MessageLogEntry, Cursor>) | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const filter = checkFilter(input.filter);
  if (!filter) return { ok: false, code: "invalid_input", field: "filter" };
  const rows = await deps.store.messageLog.list({
    projectId: project.id,
    filter,
    after: input.after,
    limit: input.limit + 1,
  });
  return { ok: true, ...pageOf(rows, input.limit, (row) => ({ createdAt: row.createdAt, id: row.id })) };
}

export type ProjectMessage = {
  ok: true;
  message: MessageDetail;
  /** Its status changes, oldest first. */
  timeline: MessageEvent[];
  /** Its reservation and refund, if any. */
  ledger: LedgerEntry[];
};

export async function projectMessage(
  deps: { store: Pick<Store, "projects" | "messageLog" | "ledger"> },
  input: { viewer: AccountViewer; projectId: string; messageId: string },
): Promise<ProjectMessage | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  if (!isId("msg", input.messageId)) return { ok: false, code: "message_not_found" };
  const [message, timeline, ledger] = await Promise.all([
    deps.store.messageLog.detail(project.id, input.messageId),
    deps.store.messageLog.events(input.messageId),
    deps.store.ledger.forMessage(project.id, input.messageId),
  ]);
  if (!message) return { ok: false, code: "message_not_found" };
  return { ok: true, message, timeline, ledger };
}
