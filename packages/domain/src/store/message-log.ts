// messages and message_events, as the dashboard reads them: a project's log
// (newest first, keyset-paged on (created_at, id) over
// messages_project_id_created_at_id_idx), one message with its timeline, the
// per-day usage of the last days, and today's count. Never the ciphertexts,
// the provider's reference or anything else spec 1.8 keeps in.

import type { Sql } from "@sms/db";
import type { KeyMode } from "../model/keys.ts";
import type { MessageStatus } from "../model/message.ts";
import { PROJECT_MATCHES } from "./messages.ts";
import { readerNearIdTime } from "./near-id-time.ts";

/** A position in a list ordered by (created_at, id), newest first: the last row of the previous page. */
export type Cursor = { createdAt: Date; id: string };

export type MessageLogFilter = {
  status?: MessageStatus;
  mode?: KeyMode;
  template?: string;
  /** created_at >= from */
  from?: Date;
  /** created_at < to */
  to?: Date;
};

/** A row of the log: what the API returns of a message, plus mode and template. */
export type MessageLogEntry = {
  id: string;
  mode: KeyMode;
  recipientMasked: string;
  template: string;
  status: MessageStatus;
  segments: number | null;
  errorCode: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export type MessageDetail = MessageLogEntry & {
  locale: string;
  sender: string;
  encoding: string | null;
  errorMessage: string | null;
  creditsReserved: number;
  /** The key it was sent with (its id; the prefix is on the keys page). */
  apiKeyId: string | null;
  submittedAt: Date | null;
  /** When the text and full number were purged (retention); null while kept. */
  textPurgedAt: Date | null;
};

export type MessageEvent = { status: MessageStatus; errorCode: string | null; at: Date };

/** One day (UTC), one mode and status: how many messages and segments. */
export type UsageRow = {
  day: Date;
  mode: KeyMode;
  status: MessageStatus;
  messages: number;
  segments: number;
};

const LOG_COLUMNS = `id, mode::text AS mode, recipient_masked, template, status::text AS status, segments,
  error_code, created_at, updated_at`;

type LogRow = {
  id: string;
  mode: KeyMode;
  recipient_masked: string;
  template: string;
  status: MessageStatus;
  segments: number | null;
  error_code: string | null;
  created_at: Date;
  updated_at: Date;
};

function fromLogRow(row: LogRow): MessageLogEntry {
  return {
    id: row.id,
    mode: row.mode,
    recipientMasked: row.recipient_masked,
    template: row.template,
    status: row.status,
    segments: row.segments === null ? null : Number(row.segments),
    errorCode: row.error_code,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

// Unnamed statements are planned with their parameters' values, so each
// "$n IS NULL OR …" folds away and the scan walks the (project_id,
// created_at, id) index backwards from the cursor.
const LIST_SQL = `
  SELECT ${LOG_COLUMNS} FROM messages
  WHERE project_id = $1
    AND (CAST($2 AS text) IS NULL OR status = CAST($2 AS "MessageStatus"))
    AND (CAST($3 AS text) IS NULL OR mode = CAST($3 AS "KeyMode"))
    AND (CAST($4 AS text) IS NULL OR template = CAST($4 AS text))
    AND (CAST($5 AS timestamptz) IS NULL OR created_at >= CAST($5 AS timestamptz))
    AND (CAST($6 AS timestamptz) IS NULL OR created_at < CAST($6 AS timestamptz))
    AND (CAST($7 AS timestamptz) IS NULL OR (created_at, id) < (CAST($7 AS timestamptz), CAST($8 AS text)))
  ORDER BY created_at DESC, id DESC
  LIMIT CAST($9 AS integer)`;

const DETAIL_SQL = `
  SELECT ${LOG_COLUMNS}, locale, sender, encoding, error_message, credits_reserved, api_key_id, submitted_at,
         text_purged_at
  FROM messages WHERE id = $1 AND ${PROJECT_MATCHES}`;

const EVENTS_SQL = `
  SELECT status::text AS status, error_code, created_at FROM message_events
  WHERE message_id = $1`;

/** The reads by id, first in the months of the id's time (near-id-time.ts). */
const detailNear = readerNearIdTime(DETAIL_SQL);
const eventsNear = readerNearIdTime(EVENTS_SQL, {
  column: "message_created_at",
  orderBy: "created_at, status",
});

const USAGE_SQL = `
  SELECT floor(extract(epoch FROM created_at) / 86400)::int AS day, mode::text AS mode, status::text AS status,
         count(*)::int AS messages, COALESCE(sum(segments), 0)::int AS segments
  FROM messages
  WHERE project_id = $1 AND created_at >= CAST($2 AS timestamptz) AND created_at < CAST($3 AS timestamptz)
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;

// The onboarding checklist's facts, each an EXISTS over an index's first row.
const ONBOARDING_SQL = `
  SELECT EXISTS (SELECT 1 FROM messages WHERE project_id = $1 AND mode = 'test') AS test_sent,
         EXISTS (SELECT 1 FROM messages WHERE project_id = $1 AND status = 'delivered') AS delivered,
         EXISTS (SELECT 1 FROM api_keys WHERE project_id = $1 AND mode = 'live') AS live_key,
         EXISTS (SELECT 1 FROM messages WHERE project_id = $1 AND mode = 'live') AS live_sent`;

export type OnboardingFacts = { testSent: boolean; delivered: boolean; liveKey: boolean; liveSent: boolean };

export function messageLogStore(sql: Sql) {
  return {
    /** What the onboarding checklist ticks from: a test send, a delivery, a live key, a live send. */
    async onboarding(projectId: string): Promise<OnboardingFacts> {
      const [row] = await sql.query<{
        test_sent: boolean;
        delivered: boolean;
        live_key: boolean;
        live_sent: boolean;
      }>(ONBOARDING_SQL, [projectId]);
      return {
        testSent: row?.test_sent === true,
        delivered: row?.delivered === true,
        liveKey: row?.live_key === true,
        liveSent: row?.live_sent === true,
      };
    },

    /** One page of a project's messages, newest first, after `cursor` (exclusive). */
    async list(options: {
      projectId: string;
      filter: MessageLogFilter;
      after: Cursor | null;
      limit: number;
    }): Promise<MessageLogEntry[]> {
      const { filter, after } = options;
      const rows = await sql.query<LogRow>(LIST_SQL, [
        options.projectId,
        filter.status ?? null,
        filter.mode ?? null,
        filter.template ?? null,
        filter.from ?? null,
        filter.to ?? null,
        after?.createdAt ?? null,
        after?.id ?? null,
        options.limit,
      ]);
      return rows.map(fromLogRow);
    },

    /** One message of the project (absent when it belongs to another), in the months of its id's time (near-id-time.ts). */
    async detail(projectId: string, messageId: string): Promise<MessageDetail | null> {
      const [row] = await detailNear<
        LogRow & {
          locale: string;
          sender: string;
          encoding: string | null;
          error_message: string | null;
          credits_reserved: number;
          api_key_id: string | null;
          submitted_at: Date | null;
          text_purged_at: Date | null;
        }
      >(sql, messageId, [messageId, projectId]);
      if (!row) return null;
      return {
        ...fromLogRow(row),
        locale: row.locale,
        sender: row.sender,
        encoding: row.encoding,
        errorMessage: row.error_message,
        creditsReserved: Number(row.credits_reserved),
        apiKeyId: row.api_key_id,
        submittedAt: row.submitted_at === null ? null : new Date(row.submitted_at),
        textPurgedAt: row.text_purged_at === null ? null : new Date(row.text_purged_at),
      };
    },

    /** The message's status changes, oldest first. */
    async events(messageId: string): Promise<MessageEvent[]> {
      const rows = await eventsNear<{ status: MessageStatus; error_code: string | null; created_at: Date }>(
        sql,
        messageId,
        [messageId],
      );
      return rows.map((row) => ({
        status: row.status,
        errorCode: row.error_code,
        at: new Date(row.created_at),
      }));
    },

    /** Messages and segments per UTC day, mode and status, for messages created in [from, to). */
    async usageByDay(projectId: string, from: Date, to: Date): Promise<UsageRow[]> {
      const rows = await sql.query<{
        /** Days since 1970-01-01 (UTC): cheaper to group by than a formatted date, and unambiguous. */
        day: number;
        mode: KeyMode;
        status: MessageStatus;
        messages: number;
        segments: number;
      }>(USAGE_SQL, [projectId, from, to]);
      return rows.map((row) => ({
        day: new Date(Number(row.day) * 86_400_000),
        mode: row.mode,
        status: row.status,
        messages: Number(row.messages),
        segments: Number(row.segments),
      }));
    },
  };
}

export type MessageLogStore = ReturnType<typeof messageLogStore>;
