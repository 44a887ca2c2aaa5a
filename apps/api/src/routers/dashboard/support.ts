// How the dashboard's reads answer a refusal: a project or message that is
// not the viewer's (or does not exist) is NOT_FOUND, whichever it is; an input
// the domain refuses is BAD_REQUEST (the page answers 404 or 400 for the whole
// page). Actions, and the read of one key, return every refusal as a value
// (key_not_found, project_not_found, a suspended project, a pending request).
import type { DashboardRefusal } from "@sms/domain";
import { TRPCError } from "@trpc/server";
import { type DashboardActionRefusal, refusalMessage } from "../refusals.ts";

const ACCESS_CODES = new Set([
  "project_not_found",
  "message_not_found",
  "key_not_found",
  "request_not_found",
]);

/** Throws for "not found" (whoever owns it); otherwise hands the refusal back. */
function throwIfNotFound<R extends DashboardActionRefusal>(refusal: R): R {
  if (ACCESS_CODES.has(refusal.code)) {
    throw new TRPCError({ code: "NOT_FOUND", message: refusalMessage(refusal) });
  }
  return refusal;
}

/** A read's result, or the error its refusal is. */
export function orThrow<T extends { ok: true }>(result: T | DashboardRefusal): T {
  if (result.ok) return result;
  throwIfNotFound(result);
  throw new TRPCError({ code: "BAD_REQUEST", message: refusalMessage(result) });
}
