// The dashboard's and the operator's records from the domain's: each wire
// record (@sms/contract, dashboard/records.types.ts) built from what the use
// cases return, with timestamps as ISO 8601 UTC.
import type {
  operator,
  ZAuditEntry,
  ZCredits,
  ZFreeTier,
  ZKey,
  ZLedgerEntry,
  ZMessageDetail,
  ZMessageEvent,
  ZMessageRow,
  ZProject,
  ZSenderRequest,
} from "@sms/contract";
import {
  type AuditEntry,
  type CheckedCredits,
  type FreeTierUsage,
  formatTimestamp,
  type KeyRecord,
  type LedgerEntry,
  type MessageCount,
  type MessageDetail,
  type MessageEvent,
  type MessageLogEntry,
  type ProjectRecord,
  type SenderRequestRecord,
} from "@sms/domain";
import type { z } from "zod";

export const ts = (date: Date) => formatTimestamp(date);
export const tsOrNull = (date: Date | null) => (date ? formatTimestamp(date) : null);

export function toProject(project: ProjectRecord): z.infer<typeof ZProject> {
  return {
    id: project.id,
    name: project.name,
    created_at: ts(project.createdAt),
    claimed_at: tsOrNull(project.claimedAt),
    suspended_at: tsOrNull(project.suspendedAt),
    sender: project.sender,
    sender_brand_id: project.senderBrandId,
    credit_balance: project.creditBalance,
  };
}

export function toKey(key: KeyRecord): z.infer<typeof ZKey> {
  return {
    id: key.id,
    mode: key.mode,
    prefix: key.prefix,
    name: key.name,
    created_at: ts(key.createdAt),
    revoked_at: tsOrNull(key.revokedAt),
    last_used_at: tsOrNull(key.lastUsedAt),
  };
}

export function toLedgerEntry(entry: LedgerEntry): z.infer<typeof ZLedgerEntry> {
  return {
    id: entry.id,
    kind: entry.kind,
    amount: entry.amount,
    message_id: entry.messageId,
    note: entry.note,
    created_at: ts(entry.createdAt),
    ...(entry.messageKept === undefined ? {} : { message_kept: entry.messageKept }),
  };
}

export function toFreeTier(freeTier: FreeTierUsage): z.infer<typeof ZFreeTier> {
  return {
    applies: freeTier.applies,
    limit: freeTier.limit,
    used_today: freeTier.usedToday,
    remaining_today: freeTier.remainingToday,
    reset_at: ts(freeTier.resetAt),
  };
}

export function toCredits(credits: CheckedCredits): z.infer<typeof ZCredits> {
  return {
    balance: credits.balance,
    ledger_sum: credits.ledgerSum,
    consistent: credits.consistent,
    has_paid_credits: credits.hasPaidCredits,
  };
}

export function toMessageRow(message: MessageLogEntry): z.infer<typeof ZMessageRow> {
  return {
    id: message.id,
    mode: message.mode,
    to: message.recipientMasked,
    template: message.template,
    status: message.status,
    segments: message.segments,
    error_code: message.errorCode,
    created_at: ts(message.createdAt),
    updated_at: ts(message.updatedAt),
  };
}

export function toMessageDetail(message: MessageDetail): z.infer<typeof ZMessageDetail> {
  return {
    ...toMessageRow(message),
    locale: message.locale,
    sender: message.sender,
    encoding: message.encoding,
    error_message: message.errorMessage,
    credits_reserved: message.creditsReserved,
    api_key_id: message.apiKeyId,
    submitted_at: tsOrNull(message.submittedAt),
    text_purged_at: tsOrNull(message.textPurgedAt),
  };
}

export function toSenderRequest(request: SenderRequestRecord): z.infer<typeof ZSenderRequest> {
  return {
    id: request.id,
    project_id: request.projectId,
    name: request.name,
    purpose: request.purpose,
    status: request.status,
    requested_by: request.requestedBy,
    decided_by: request.decidedBy,
    decided_at: tsOrNull(request.decidedAt),
    refusal_reason: request.refusalReason,
    created_at: ts(request.createdAt),
  };
}

export const toMessageEvent = (event: MessageEvent): z.infer<typeof ZMessageEvent> => ({
  status: event.status,
  error_code: event.errorCode,
  at: ts(event.at),
});

export const toAuditEntry = (entry: AuditEntry): z.infer<typeof ZAuditEntry> => ({
  id: entry.id,
  actor: entry.actor,
  action: entry.action,
  project_id: entry.projectId,
  details: entry.details,
  created_at: ts(entry.createdAt),
});

export function toMessageCount(row: MessageCount): operator.TMessageCount {
  return { mode: row.mode, status: row.status, last_24h: row.last24h, last_7d: row.last7d };
}
