// A project's sender name: the account holder sees the current one (or the
// shared default) and their requests, and asks for a name with what it is
// for. The operator decides (operator/sender-requests.ts). At most one
// request of a project is pending at a time.
import { newId } from "@sms/crypto";
import { SENDER_NAME_PATTERN } from "../operator/set-project-sender.ts";
import type { Clock } from "../ports.ts";
import type { ProjectRecord, SenderRequestRecord, Store } from "../store/index.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";

export const MAX_PURPOSE_LENGTH = 500;

export type ProjectSender = {
  ok: true;
  project: ProjectRecord;
  /** The newest requests, newest first. */
  requests: SenderRequestRecord[];
};

export async function projectSender(
  deps: { store: Pick<Store, "projects" | "senderRequests"> },
  input: { viewer: AccountViewer; projectId: string; limit: number },
): Promise<ProjectSender | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  return {
    ok: true,
    project,
    requests: await deps.store.senderRequests.listForProject(project.id, input.limit),
  };
}

export type RequestSenderResult =
  | { ok: true; request: SenderRequestRecord }
  | { ok: false; code: "sender_request_pending"; request: SenderRequestRecord }
  | { ok: false; code: "sender_already_set"; sender: string }
  | { ok: false; code: "project_suspended"; projectId: string }
  | DashboardRefusal;

export async function requestSender(
  deps: { store: Store; clock: Clock },
  input: { viewer: AccountViewer; projectId: string; name: string; purpose: string },
): Promise<RequestSenderResult> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const name = input.name.trim();
  const purpose = input.purpose.trim();
  if (!SENDER_NAME_PATTERN.test(name)) return { ok: false, code: "invalid_input", field: "sender_name" };
  if (purpose.length < 3 || purpose.length > MAX_PURPOSE_LENGTH)
    return { ok: false, code: "invalid_input", field: "purpose" };
  const now = deps.clock.now();
  return deps.store.transaction(async (tx): Promise<RequestSenderResult> => {
    // The project row lock makes "at most one pending request" hold under concurrent requests.
    const locked = await tx.projects.lock(project.id);
    if (!locked) return PROJECT_NOT_FOUND;
    if (locked.suspendedAt) return { ok: false, code: "project_suspended", projectId: project.id };
    if (locked.sender !== null && locked.sender.toLowerCase() === name.toLowerCase())
      return { ok: false, code: "sender_already_set", sender: locked.sender };
    const pending = await tx.senderRequests.pendingFor(project.id);
    if (pending) return { ok: false, code: "sender_request_pending", request: pending };
    const id = newId("srq", now.getTime());
    await tx.senderRequests.create({
      id,
      projectId: project.id,
      name,
      purpose,
      requestedBy: input.viewer.actor,
      now,
    });
    await tx.audit.write({
      actor: input.viewer.actor,
      action: "sender.requested",
      projectId: project.id,
      details: { request_id: id, name },
      now,
    });
    const request: SenderRequestRecord = {
      id,
      projectId: project.id,
      name,
      purpose,
      status: "pending",
      requestedBy: input.viewer.actor,
      decidedBy: null,
      decidedAt: null,
      refusalReason: null,
      createdAt: now,
    };
    return { ok: true, request };
  });
}
