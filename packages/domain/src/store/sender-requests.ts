// sender_requests: an account holder's request for a project's own sender
// name, and the operator's decision on it.
import type { Sql } from "@sms/db";

export type SenderRequestStatus = "pending" | "approved" | "refused";

export type SenderRequestRecord = {
  id: string;
  projectId: string;
  name: string;
  purpose: string;
  status: SenderRequestStatus;
  requestedBy: string;
  decidedBy: string | null;
  decidedAt: Date | null;
  refusalReason: string | null;
  createdAt: Date;
};

const COLUMNS = `id, project_id, name, purpose, status::text AS status, requested_by, decided_by, decided_at,
  refusal_reason, created_at`;

type Row = {
  id: string;
  project_id: string;
  name: string;
  purpose: string;
  status: SenderRequestStatus;
  requested_by: string;
  decided_by: string | null;
  decided_at: Date | null;
  refusal_reason: string | null;
  created_at: Date;
};

function fromRow(row: Row): SenderRequestRecord {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    purpose: row.purpose,
    status: row.status,
    requestedBy: row.requested_by,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at === null ? null : new Date(row.decided_at),
    refusalReason: row.refusal_reason,
    createdAt: new Date(row.created_at),
  };
}

const CREATE_SQL = `
  INSERT INTO sender_requests (id, project_id, name, purpose, requested_by, created_at)
  VALUES ($1, $2, $3, $4, $5, CAST($6 AS timestamptz))`;
const PENDING_FOR_PROJECT_SQL = `
  SELECT ${COLUMNS} FROM sender_requests WHERE project_id = $1 AND status = 'pending'
  ORDER BY created_at DESC, id DESC LIMIT 1`;
const LIST_FOR_PROJECT_SQL = `
  SELECT ${COLUMNS} FROM sender_requests WHERE project_id = $1
  ORDER BY created_at DESC, id DESC LIMIT CAST($2 AS integer)`;
const LIST_BY_STATUS_SQL = `
  SELECT ${COLUMNS} FROM sender_requests
  WHERE status = CAST($1 AS "SenderRequestStatus")
    AND (CAST($2 AS timestamptz) IS NULL OR (created_at, id) < (CAST($2 AS timestamptz), CAST($3 AS text)))
  ORDER BY created_at DESC, id DESC
  LIMIT CAST($4 AS integer)`;
const FIND_SQL = `SELECT ${COLUMNS} FROM sender_requests WHERE id = $1`;
const LOCK_SQL = `${FIND_SQL} FOR UPDATE`;
const DECIDE_SQL = `
  UPDATE sender_requests
  SET status = CAST($2 AS "SenderRequestStatus"), decided_by = $3, decided_at = CAST($4 AS timestamptz),
      refusal_reason = $5
  WHERE id = $1 AND status = 'pending'
  RETURNING id`;

export function senderRequestStore(sql: Sql) {
  return {
    async create(request: {
      id: string;
      projectId: string;
      name: string;
      purpose: string;
      requestedBy: string;
      now: Date;
    }): Promise<void> {
      await sql.query(CREATE_SQL, [
        request.id,
        request.projectId,
        request.name,
        request.purpose,
        request.requestedBy,
        request.now,
      ]);
    },

    /** The project's pending request, if any (there is at most one). */
    async pendingFor(projectId: string): Promise<SenderRequestRecord | null> {
      const [row] = await sql.query<Row>(PENDING_FOR_PROJECT_SQL, [projectId]);
      return row ? fromRow(row) : null;
    },

    /** The project's newest requests, newest first. */
    async listForProject(projectId: string, limit: number): Promise<SenderRequestRecord[]> {
      return (await sql.query<Row>(LIST_FOR_PROJECT_SQL, [projectId, limit])).map(fromRow);
    },

    /** One page of requests in `status`, newest first, after `after` (exclusive). */
    async listByStatus(
      status: SenderRequestStatus,
      after: { createdAt: Date; id: string } | null,
      limit: number,
    ): Promise<SenderRequestRecord[]> {
      const rows = await sql.query<Row>(LIST_BY_STATUS_SQL, [
        status,
        after?.createdAt ?? null,
        after?.id ?? null,
        limit,
      ]);
      return rows.map(fromRow);
    },

    async find(requestId: string): Promise<SenderRequestRecord | null> {
      const [row] = await sql.query<Row>(FIND_SQL, [requestId]);
      return row ? fromRow(row) : null;
    },

    /** The request, its row locked until the transaction ends (one decision at a time). */
    async lock(requestId: string): Promise<SenderRequestRecord | null> {
      const [row] = await sql.query<Row>(LOCK_SQL, [requestId]);
      return row ? fromRow(row) : null;
    },

    /** Decides a pending request; false when it was not pending. */
    async decide(decision: {
      requestId: string;
      status: Exclude<SenderRequestStatus, "pending">;
      decidedBy: string;
      now: Date;
      refusalReason: string | null;
    }): Promise<boolean> {
      const rows = await sql.query(DECIDE_SQL, [
        decision.requestId,
        decision.status,
        decision.decidedBy,
        decision.now,
        decision.refusalReason,
      ]);
      return rows.length > 0;
    },
  };
}

export type SenderRequestStore = ReturnType<typeof senderRequestStore>;
