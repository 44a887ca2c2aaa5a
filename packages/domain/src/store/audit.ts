// audit_log: one row per operator action. `details` never holds key
// material, message text or full numbers.
import { newId } from "@sms/crypto";
import type { Sql } from "@sms/db";
import type { AuditAction } from "../model/audit.ts";

const WRITE_SQL = `
  INSERT INTO audit_log (id, actor, action, project_id, details, created_at)
  VALUES ($1, $2, $3, $4, CAST($5 AS jsonb), CAST($6 AS timestamptz))`;

export type AuditEntryInput = {
  actor: string;
  action: AuditAction;
  projectId: string | null;
  details: Record<string, unknown>;
  now: Date;
};

export function auditStore(sql: Sql) {
  return {
    /** Writes one audit row; returns its id. */
    async write(entry: AuditEntryInput): Promise<string> {
      const id = newId("aud", entry.now.getTime());
      await sql.query(WRITE_SQL, [
        id,
        entry.actor,
        entry.action,
        entry.projectId,
        JSON.stringify(entry.details),
        entry.now,
      ]);
      return id;
    },
  };
}

export type AuditStore = ReturnType<typeof auditStore>;
