// Operator: decide account holders' sender requests. Approving sets the
// project's sender through setProjectSender (the same function, brand check
// and audit row as `set-sender`), then marks the request approved; refusing
// records the reason the account holder sees.
import { isId } from "@sms/crypto";
import type { SenderRequestRecord, SenderRequestStatus } from "../store/index.ts";
import type { Cursor } from "../store/message-log.ts";
import { type Page, pageOf } from "../dashboard/paging.ts";
import {
  checkCommon,
  invalid,
  type OperatorDeps,
  type OperatorInput,
  type OperatorRefusal,
} from "./operator-support.ts";
import { MAX_REASON_LENGTH } from "./suspend-project.ts";
import {
  type SenderBrandDirectory,
  type SetProjectSenderResult,
  setProjectSender,
} from "./set-project-sender.ts";

export type SenderRequestRefusal =
  | { ok: false; code: "sender_request_not_found" }
  | { ok: false; code: "sender_request_decided"; status: SenderRequestStatus };

export async function listSenderRequests(
  deps: Pick<OperatorDeps, "store">,
  input: { status: SenderRequestStatus; after: Cursor | null; limit: number },
): Promise<{ ok: true } & Page<SenderRequestRecord, Cursor>> {
  const rows = await deps.store.senderRequests.listByStatus(input.status, input.after, input.limit + 1);
  return { ok: true, ...pageOf(rows, input.limit, (row) => ({ createdAt: row.createdAt, id: row.id })) };
}

/** The request as read (or locked), or why it cannot be decided. */
function stillPending(request: SenderRequestRecord | null): SenderRequestRecord | SenderRequestRefusal {
  if (!request) return { ok: false, code: "sender_request_not_found" };
  if (request.status !== "pending")
    return { ok: false, code: "sender_request_decided", status: request.status };
  return request;
}

async function pendingRequest(
  deps: Pick<OperatorDeps, "store">,
  requestId: string,
): Promise<SenderRequestRecord | SenderRequestRefusal | OperatorRefusal> {
  if (!isId("srq", requestId)) return { ok: false, code: "sender_request_not_found" };
  return stillPending(await deps.store.senderRequests.find(requestId));
}

export type ApproveSenderRequestResult =
  | (Extract<SetProjectSenderResult, { ok: true }> & { requestId: string })
  | OperatorRefusal
  | SenderRequestRefusal;

export async function approveSenderRequest(
  deps: OperatorDeps & { brands: SenderBrandDirectory | null },
  input: OperatorInput & { requestId: string; brandId?: number },
): Promise<ApproveSenderRequestResult> {
  const refused = checkCommon(input);
  if (refused) return refused;
  const request = await pendingRequest(deps, input.requestId);
  if ("ok" in request) return request;
  const set = await setProjectSender(deps, {
    actor: input.actor,
    projectId: request.projectId,
    name: request.name,
    ...(input.brandId !== undefined ? { brandId: input.brandId } : {}),
  });
  if (!set.ok) return set;
  const now = deps.clock.now();
  const decided = await deps.store.transaction(async (tx) => {
    const marked = await tx.senderRequests.decide({
      requestId: request.id,
      status: "approved",
      decidedBy: input.actor,
      now,
      refusalReason: null,
    });
    if (marked) {
      await tx.audit.write({
        actor: input.actor,
        action: "sender.request_approved",
        projectId: request.projectId,
        details: { request_id: request.id, sender: set.sender, brand_id: set.brandId },
        now,
      });
    }
    return marked;
  });
  // Another operator decided it meanwhile: the sender they set stands either way.
  if (!decided) {
    const current = await deps.store.senderRequests.find(request.id);
    return { ok: false, code: "sender_request_decided", status: current?.status ?? "approved" };
  }
  return { ...set, requestId: request.id };
}

export type RefuseSenderRequestResult =
  | { ok: true; requestId: string; projectId: string }
  | OperatorRefusal
  | SenderRequestRefusal;

export async function refuseSenderRequest(
  deps: OperatorDeps,
  input: OperatorInput & { requestId: string; reason: string },
): Promise<RefuseSenderRequestResult> {
  const refused = checkCommon(input);
  if (refused) return refused;
  const reason = input.reason.trim();
  if (reason === "" || reason.length > MAX_REASON_LENGTH) return invalid("reason");
  if (!isId("srq", input.requestId)) return { ok: false, code: "sender_request_not_found" };
  const now = deps.clock.now();
  return deps.store.transaction(async (tx): Promise<RefuseSenderRequestResult> => {
    const request = stillPending(await tx.senderRequests.lock(input.requestId));
    if ("ok" in request) return request;
    await tx.senderRequests.decide({
      requestId: request.id,
      status: "refused",
      decidedBy: input.actor,
      now,
      refusalReason: reason,
    });
    await tx.audit.write({
      actor: input.actor,
      action: "sender.request_refused",
      projectId: request.projectId,
      details: { request_id: request.id, name: request.name, reason },
      now,
    });
    return { ok: true, requestId: request.id, projectId: request.projectId };
  });
}
