// What every operator command shares: its dependencies, its refusals (values,
// not exceptions), input checks, and the audit line it writes.
import { isId, newId } from "@sms/crypto";
import type { PrismaClient } from "@sms/db";
import type { Clock } from "../ports.ts";

export type OperatorDeps = {
  prisma: PrismaClient;
  clock: Clock;
  /** Who acts (an operator's name or OS user); written to the audit log. */
  actor: string;
};

export type OperatorRefusalCode =
  | "invalid_input"
  | "project_not_found"
  | "project_not_claimed"
  | "project_suspended"
  | "key_not_found"
  | "key_ambiguous"
  | "reference_conflict"
  | "brand_not_found"
  | "brand_not_approved"
  | "brand_check_failed";

export type OperatorRefusal = { ok: false; code: OperatorRefusalCode; message: string };

export function refuse(code: OperatorRefusalCode, message: string): OperatorRefusal {
  return { ok: false, code, message };
}

/** The audit actions the operator's commands write. */
export type AuditAction =
  | "api_key.created"
  | "api_key.revoked"
  | "project.suspended"
  | "project.reinstated"
  | "credits.granted"
  | "sender.set"
  | "sender.cleared"
  | "project.viewed"
  | "message_keys.rotated";

export const ACTOR_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$/;

/** Checks what every command takes: the actor, and a project id when given. */
export function checkCommon(deps: OperatorDeps, projectId?: string): OperatorRefusal | null {
  if (!ACTOR_PATTERN.test(deps.actor)) {
    return refuse("invalid_input", "The actor must be 1–64 characters: letters, digits and . _ @ + -.");
  }
  if (projectId !== undefined && !isId("prj", projectId)) {
    return refuse("invalid_input", "The project id must look like prj_ followed by 26 characters.");
  }
  return null;
}

type Tx = Pick<PrismaClient, "auditEntry">;

/** One audit line. `details` must never hold key material, message text or full numbers. */
export async function writeAuditEntry(
  tx: Tx,
  entry: {
    actor: string;
    action: AuditAction;
    projectId: string | null;
    details: Record<string, unknown>;
    now: Date;
  },
): Promise<string> {
  const id = newId("aud", entry.now.getTime());
  await tx.auditEntry.create({
    data: {
      id,
      actor: entry.actor,
      action: entry.action,
      projectId: entry.projectId,
      details: entry.details as never,
      createdAt: entry.now,
    },
  });
  return id;
}

export const PROJECT_NOT_FOUND = (projectId: string) =>
  refuse("project_not_found", `No project ${projectId}.`);
