// The developer console's request log and search (docs/dashboard.md#request-log):
// an account holder's own project's API requests, newest first, filtered and
// keyset-paged like the message log; one request; the requests behind one
// message; and the search box, which finds a message, a verification or a
// request by its id, or the requests made with an Idempotency-Key.
import { API_KEY_PATTERN, isId } from "@sms/crypto";
import type { Cursor, RequestLogEntry, RequestLogFilter, Store } from "../store/index.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";
import { type Page, pageOf } from "./paging.ts";

function checkFilter(filter: RequestLogFilter): RequestLogFilter | null {
  if (filter.statusClass !== undefined && ![2, 4, 5].includes(filter.statusClass)) return null;
  if (filter.mode !== undefined && filter.mode !== "test" && filter.mode !== "live") return null;
  if (filter.errorCode !== undefined && !/^[a-z_]{1,64}$/.test(filter.errorCode)) return null;
  if (filter.route !== undefined && !/^\/[A-Za-z0-9_/{}.-]{0,120}$/.test(filter.route)) return null;
  for (const date of [filter.from, filter.to]) {
    if (date !== undefined && Number.isNaN(date.getTime())) return null;
  }
  return filter;
}

export async function listProjectRequests(
  deps: { store: Pick<Store, "projects" | "requestLog"> },
  input: {
    viewer: AccountViewer;
    projectId: string;
    filter: RequestLogFilter;
    after: Cursor | null;
    limit: number;
  },
): Promise<({ ok: true } & Page<RequestLogEntry, Cursor>) | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const filter = checkFilter(input.filter);
  if (!filter) return { ok: false, code: "invalid_input", field: "filter" };
  const rows = await deps.store.requestLog.list({
    projectId: project.id,
    filter,
    after: input.after,
    limit: input.limit + 1,
  });
  return { ok: true, ...pageOf(rows, input.limit, (row) => ({ createdAt: row.createdAt, id: row.id })) };
}

export async function projectRequest(
  deps: { store: Pick<Store, "projects" | "requestLog"> },
  input: { viewer: AccountViewer; projectId: string; requestId: string },
): Promise<{ ok: true; request: RequestLogEntry } | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  if (!isId("req", input.requestId)) return { ok: false, code: "request_not_found" };
  const request = await deps.store.requestLog.find(project.id, input.requestId);
  return request ? { ok: true, request } : { ok: false, code: "request_not_found" };
}

/** The requests that created, replayed or read a message of the project, oldest first. */
export async function messageRequests(
  deps: { store: Pick<Store, "projects" | "requestLog"> },
  input: { viewer: AccountViewer; projectId: string; messageId: string },
): Promise<{ ok: true; requests: RequestLogEntry[] } | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  if (!isId("msg", input.messageId)) return { ok: false, code: "message_not_found" };
  return { ok: true, requests: await deps.store.requestLog.forMessage(project.id, input.messageId) };
}

/**
 * Where the search box leads: one message, one verification or one request
 * (its page), the requests made with an Idempotency-Key (a list), or nothing.
 * A `vrf_` id is looked up among the project's verifications.
 */
export type SearchResult =
  | { ok: true; kind: "message"; id: string }
  | { ok: true; kind: "verification"; id: string }
  | { ok: true; kind: "request"; id: string }
  | { ok: true; kind: "idempotency_key"; requests: RequestLogEntry[] }
  | { ok: true; kind: "not_found" }
  /** The query holds a whole API key: refused, never looked up (the page must not echo it either). */
  | { ok: false; code: "whole_key_given" };

/** A whole API key anywhere in a text (a pasted `Authorization: Bearer sk_…` included). */
const WHOLE_KEY_IN_TEXT = new RegExp(API_KEY_PATTERN.source.replace(/^\^|\$$/g, ""));

export const MAX_SEARCH_LENGTH = 255;

/** A verification id's shape (the prefix joins @sms/crypto's list with verifications). */
const VERIFICATION_ID = /^vrf_[0-9A-Za-z]{10,40}$/;

export async function searchProject(
  deps: {
    store: Pick<Store, "projects" | "requestLog" | "messageLog" | "verifications">;
    /** Whether the project has this verification (default: the verifications store). */
    findVerification?: (projectId: string, verificationId: string) => Promise<boolean>;
  },
  input: { viewer: AccountViewer; projectId: string; query: string },
): Promise<SearchResult | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const query = input.query.trim();
  if (query === "" || query.length > MAX_SEARCH_LENGTH)
    return { ok: false, code: "invalid_input", field: "search" };
  if (WHOLE_KEY_IN_TEXT.test(query)) return { ok: false, code: "whole_key_given" };
  if (isId("msg", query)) {
    const message = await deps.store.messageLog.detail(project.id, query);
    if (message) return { ok: true, kind: "message", id: query };
  } else if (isId("req", query)) {
    const request = await deps.store.requestLog.find(project.id, query);
    if (request) return { ok: true, kind: "request", id: query };
  } else if (VERIFICATION_ID.test(query)) {
    const find =
      deps.findVerification ??
      (async (projectId: string, id: string) =>
        (await deps.store.verifications.read(id, projectId)) !== null);
    if (await find(project.id, query)) {
      return { ok: true, kind: "verification", id: query };
    }
  }
  // Anything else, or an id-shaped value that is no id of ours: an Idempotency-Key.
  const requests = await deps.store.requestLog.byIdempotencyKey(project.id, query);
  if (requests.length > 0) return { ok: true, kind: "idempotency_key", requests };
  return { ok: true, kind: "not_found" };
}
