// audit_log: one row per operator or dashboard action. `details` never holds key
// material, message text or full numbers.
import { newId } from "@sms/crypto";
import type { Sql } from "@sms/db";
import type { AuditAction } from "../model/audit.ts";

const WRITE_SQL = `
  INSERT INTO audit_log (id, actor, action, project_id, details, created_at)
  VALUES ($1, $2, $3, $4, CAST($5 AS jsonb), CAST($6 AS timestamptz))`;

const LIST_SQL = `
  SELECT id, actor, action, project_id, details, created_at FROM audit_log
  WHERE (CAST($1 AS text) IS NULL OR project_id = CAST($1 AS text))
    AND (CAST($2 AS timestamptz) IS NULL OR (created_at, id) < (CAST($2 AS timestamptz), CAST($3 AS text)))
  ORDER BY created_at DESC, id DESC
  LIMIT CAST($4 AS integer)`;

export type AuditEntry = {
  id: string;
  actor: string;
  action: string;
  projectId: string | null;
  details: Record<string, unknown>;
  createdAt: Date;
};

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

    /** One page of the log (all of it, or one project's), newest first, after `after` (exclusive). */
    async list(options: {
      projectId: string | null;
      after: { createdAt: Date; id: string } | null;
      limit: number;
    }): Promise<AuditEntry[]> {
      const rows = await sql.query<{
        id: string;
        actor: string;
        action: string;
        project_id: string | null;
        details: unknown;
        created_at: Date;
      }>(LIST_SQL, [
        options.projectId,
        options.after?.createdAt ?? null,
        options.after?.id ?? null,
        options.limit,
      ]);
      return rows.map((row) => ({
        id: row.id,
        actor: row.actor,
        action: row.action,
        projectId: row.project_id,
        details: (typeof row.details === "string" ? JSON.parse(row.details) : row.details) as Record<
          string,
          unknown
        >,
        createdAt: new Date(row.created_at),
      }));
    },
  };
}

export type AuditStore = ReturnType<typeof auditStore>;
