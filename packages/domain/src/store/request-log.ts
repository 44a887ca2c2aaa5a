// request_log: the developer console's record of every API request made with a
// project's key (docs/dashboard.md#request-log). Rows are written in batches by
// the recorder (one multi-row INSERT over unnest), read newest first,
// keyset-paged on (created_at, id) over request_log_project_id_created_at_id_idx,
// and purged after the retention period. What a row holds is the request's
// shape and outcome: never a body value, a number, a code or a key.
import { params, type Sql, sql } from "@sms/db";
import type { KeyMode } from "../model/keys.ts";
import type { Cursor } from "./message-log.ts";
import { RELAXED_COMMIT } from "./relaxed-commit.ts";

/** What the recorder writes for one request. */
export type RequestRecord = {
  id: string;
  projectId: string;
  keyId: string | null;
  mode: KeyMode | null;
  method: string;
  route: string;
  status: number;
  errorCode: string | null;
  idempotencyKey: string | null;
  replayed: boolean;
  durationMs: number;
  messageId: string | null;
  verificationId: string | null;
  createdAt: Date;
};

/** A row as the console shows it: the record with its key's prefix and name. */
export type RequestLogEntry = RequestRecord & { keyPrefix: string | null; keyName: string | null };

export type RequestLogFilter = {
  /** 2, 4 or 5: the status class. */
  statusClass?: 2 | 4 | 5;
  errorCode?: string;
  route?: string;
  mode?: KeyMode;
  /** created_at >= from */
  from?: Date;
  /** created_at < to */
  to?: Date;
};

const COLUMNS = `r.id, r.project_id, r.key_id, r.mode::text AS mode, r.method, r.route, r.status, r.error_code,
  r.idempotency_key, r.replayed, r.duration_ms, r.message_id, r.verification_id, r.created_at,
  k.prefix AS key_prefix, k.name AS key_name`;

const FROM = `request_log r LEFT JOIN api_keys k ON k.id = r.key_id`;

/**
 * A batch of records in one statement. Its transaction commits without waiting for the disk: a crash may lose
 * the last fraction of a second of the log (a debugging aid, not a ledger), and the sends' and reads' own
 * durable commits do not queue behind a flush for it. No ON CONFLICT: each record's id is new (newId per
 * request) and a batch is written once, never retried, and the speculative insertion that ON CONFLICT costs
 * every row was a fifth of the statement (bench/log/2026-11-27.md#what-the-request-log-costs-a-read-2026-11-27).
 */
/** A batch's named values, one array per column. */
type InsertManyValues = {
  ids: string[];
  projectIds: string[];
  keyIds: Array<string | null>;
  modes: Array<string | null>;
  methods: string[];
  routes: string[];
  statuses: number[];
  errorCodes: Array<string | null>;
  idempotencyKeys: Array<string | null>;
  replayed: boolean[];
  durations: number[];
  messageIds: Array<string | null>;
  verificationIds: Array<string | null>;
  createdAts: string[];
};
const w = params<InsertManyValues>();

const INSERT_MANY_SQL = sql`
  WITH written AS (
    INSERT INTO request_log (id, project_id, key_id, mode, method, route, status, error_code, idempotency_key,
                             replayed, duration_ms, message_id, verification_id, created_at)
    SELECT r.id, r.project_id, r.key_id, CAST(r.mode AS "KeyMode"), r.method, r.route, r.status, r.error_code,
           r.idempotency_key, r.replayed, r.duration_ms, r.message_id, r.verification_id, r.created_at
    FROM unnest(CAST(${w.ids} AS text[]), CAST(${w.projectIds} AS text[]), CAST(${w.keyIds} AS text[]), CAST(${w.modes} AS text[]), CAST(${w.methods} AS text[]),
                CAST(${w.routes} AS text[]), CAST(${w.statuses} AS integer[]), CAST(${w.errorCodes} AS text[]), CAST(${w.idempotencyKeys} AS text[]),
                CAST(${w.replayed} AS boolean[]), CAST(${w.durations} AS integer[]), CAST(${w.messageIds} AS text[]), CAST(${w.verificationIds} AS text[]),
                CAST(${w.createdAts} AS timestamptz[]))
         AS r(id, project_id, key_id, mode, method, route, status, error_code, idempotency_key, replayed,
              duration_ms, message_id, verification_id, created_at)
    WHERE EXISTS (SELECT 1 FROM projects p WHERE p.id = r.project_id)
    RETURNING 1
  )
  SELECT count(*)::int AS written, ${sql.raw(RELAXED_COMMIT)} FROM written`;

// As the message log: unnamed statements are planned with their values, so
// each "$n IS NULL OR …" folds away.
/** A page's named values: its filters (null: any) and where it starts. */
type ListValues = {
  projectId: string;
  statusClass: number | null;
  errorCode: string | null;
  route: string | null;
  mode: string | null;
  from: Date | null;
  to: Date | null;
  afterCreatedAt: Date | null;
  afterId: string | null;
  limit: number;
};
const l = params<ListValues>();

const LIST_SQL = sql`
  SELECT ${sql.raw(COLUMNS)} FROM ${sql.raw(FROM)}
  WHERE r.project_id = ${l.projectId}
    AND (CAST(${l.statusClass} AS integer) IS NULL OR (r.status >= CAST(${l.statusClass} AS integer) * 100 AND r.status < CAST(${l.statusClass} AS integer) * 100 + 100))
    AND (CAST(${l.errorCode} AS text) IS NULL OR r.error_code = CAST(${l.errorCode} AS text))
    AND (CAST(${l.route} AS text) IS NULL OR r.route = CAST(${l.route} AS text))
    AND (CAST(${l.mode} AS text) IS NULL OR r.mode = CAST(${l.mode} AS "KeyMode"))
    AND (CAST(${l.from} AS timestamptz) IS NULL OR r.created_at >= CAST(${l.from} AS timestamptz))
    AND (CAST(${l.to} AS timestamptz) IS NULL OR r.created_at < CAST(${l.to} AS timestamptz))
    AND (CAST(${l.afterCreatedAt} AS timestamptz) IS NULL OR (r.created_at, r.id) < (CAST(${l.afterCreatedAt} AS timestamptz), CAST(${l.afterId} AS text)))
  ORDER BY r.created_at DESC, r.id DESC
  LIMIT CAST(${l.limit} AS integer)`;

const FIND_SQL = `SELECT ${COLUMNS} FROM ${FROM} WHERE r.id = $1 AND r.project_id = $2`;

const FOR_MESSAGE_SQL = `
  SELECT ${COLUMNS} FROM ${FROM} WHERE r.message_id = $1 AND r.project_id = $2
  ORDER BY r.created_at, r.id LIMIT 100`;

const BY_IDEMPOTENCY_KEY_SQL = `
  SELECT ${COLUMNS} FROM ${FROM} WHERE r.project_id = $1 AND r.idempotency_key = $2
  ORDER BY r.created_at DESC, r.id DESC LIMIT 50`;

const PURGE_SQL = `
  WITH doomed AS (
    SELECT id FROM request_log WHERE created_at < CAST($1 AS timestamptz)
    ORDER BY created_at LIMIT CAST($2 AS integer) FOR UPDATE SKIP LOCKED
  ), gone AS (
    DELETE FROM request_log r USING doomed WHERE r.id = doomed.id RETURNING 1
  )
  SELECT count(*)::int AS purged FROM gone`;

type Row = {
  id: string;
  project_id: string;
  key_id: string | null;
  mode: KeyMode | null;
  method: string;
  route: string;
  status: number;
  error_code: string | null;
  idempotency_key: string | null;
  replayed: boolean;
  duration_ms: number;
  message_id: string | null;
  verification_id: string | null;
  created_at: Date;
  key_prefix: string | null;
  key_name: string | null;
};

function entryOf(row: Row): RequestLogEntry {
  return {
    id: row.id,
    projectId: row.project_id,
    keyId: row.key_id,
    mode: row.mode,
    method: row.method,
    route: row.route,
    status: Number(row.status),
    errorCode: row.error_code,
    idempotencyKey: row.idempotency_key,
    replayed: row.replayed,
    durationMs: Number(row.duration_ms),
    messageId: row.message_id,
    verificationId: row.verification_id,
    createdAt: new Date(row.created_at),
    keyPrefix: row.key_prefix,
    keyName: row.key_name,
  };
}

export function requestLogStore(sql: Sql) {
  return {
    /**
     * Writes many records in one statement, committed without waiting for the disk (INSERT_MANY_SQL); a
     * record whose project is gone is skipped.
     */
    async insertMany(records: readonly RequestRecord[]): Promise<void> {
      if (records.length === 0) return;
      const column = <K extends keyof RequestRecord>(key: K) => records.map((record) => record[key]);
      await sql.query(
        INSERT_MANY_SQL.text,
        INSERT_MANY_SQL.bind({
          ids: column("id"),
          projectIds: column("projectId"),
          keyIds: column("keyId"),
          modes: column("mode"),
          methods: column("method"),
          routes: column("route"),
          statuses: column("status"),
          errorCodes: column("errorCode"),
          idempotencyKeys: column("idempotencyKey"),
          replayed: column("replayed"),
          durations: column("durationMs"),
          messageIds: column("messageId"),
          verificationIds: column("verificationId"),
          createdAts: records.map((record) => record.createdAt.toISOString()),
        }),
      );
    },

    /** One page of a project's requests, newest first, after `after` (exclusive). */
    async list(options: {
      projectId: string;
      filter: RequestLogFilter;
      after: Cursor | null;
      limit: number;
    }): Promise<RequestLogEntry[]> {
      const { filter } = options;
      const rows = await sql.query<Row>(
        LIST_SQL.text,
        LIST_SQL.bind({
          projectId: options.projectId,
          statusClass: filter.statusClass ?? null,
          errorCode: filter.errorCode ?? null,
          route: filter.route ?? null,
          mode: filter.mode ?? null,
          from: filter.from ?? null,
          to: filter.to ?? null,
          afterCreatedAt: options.after?.createdAt ?? null,
          afterId: options.after?.id ?? null,
          limit: options.limit,
        }),
      );
      return rows.map(entryOf);
    },

    /** One request of the project; null when it is not the project's (or was purged). */
    async find(projectId: string, requestId: string): Promise<RequestLogEntry | null> {
      const [row] = await sql.query<Row>(FIND_SQL, [requestId, projectId]);
      return row ? entryOf(row) : null;
    },

    /** The requests that created, replayed or read one message, oldest first. */
    async forMessage(projectId: string, messageId: string): Promise<RequestLogEntry[]> {
      return (await sql.query<Row>(FOR_MESSAGE_SQL, [messageId, projectId])).map(entryOf);
    },

    /** The project's requests made with one Idempotency-Key, newest first. */
    async byIdempotencyKey(projectId: string, idempotencyKey: string): Promise<RequestLogEntry[]> {
      return (await sql.query<Row>(BY_IDEMPOTENCY_KEY_SQL, [projectId, idempotencyKey])).map(entryOf);
    },

    /** Deletes up to `batchSize` records older than `cutoff`; returns how many. */
    async purgeOlderThan(cutoff: Date, batchSize: number): Promise<number> {
      const [row] = await sql.query<{ purged: number }>(PURGE_SQL, [cutoff, batchSize]);
      return Number(row?.purged ?? 0);
    },
  };
}

export type RequestLogStore = ReturnType<typeof requestLogStore>;
