// @sms/domain: the use cases, the model they reason in, the ports they depend
// on, and the store: the only place that speaks SQL. No HTTP, no tRPC, no
// wording for callers (apps/api words codes and data).
//
//   model/       types and pure rules, no I/O
//   store/       one file per table family; createStore(db)
//   <use case>/  messages, auth, test-keys, claims, credits, limits, operator, privacy, dashboard

export * from "./model/index.ts";
export * from "./ports.ts";
export * from "./provider.ts";
export * from "./slots.ts";
export {
  CHANGES_CHANNEL,
  createStore,
  type ReplicaReads,
  type ResourceChanges,
  resourceChanges,
  type Store,
  type StoreTx,
  withReplicaReads,
} from "./store/index.ts";
export type {
  AccountProjectRow,
  AuditEntry,
  Cursor,
  FoundProject,
  KeyRecord,
  LedgerEntry,
  MessageDetail,
  MessageEvent,
  MessageLogEntry,
  ProjectRecord,
  RequestLogEntry,
  RequestLogFilter,
  RequestRecord,
  SenderRequestRecord,
  SenderRequestStatus,
} from "./store/index.ts";
export * from "./limits/consume-limits.ts";
export * from "./auth/authenticate-api-key.ts";
export * from "./auth/mcp-session-keys.ts";
export * from "./test-keys/create-test-key.ts";
export * from "./messages/send/send-message.ts";
export * from "./database-clock.ts";
export * from "./messages/answered-keys.ts";
export {
  type Cache,
  type CacheEntry,
  type CacheRead,
  type CacheStats,
  cacheStats,
  createCache,
} from "./cache.ts";
export * from "./messages/get-message.ts";
export * from "./messages/check-statuses.ts";
export * from "./messages/recover-queued.ts";
export * from "./messages/message-backlog.ts";
export * from "./privacy/partitions.ts";
export * from "./privacy/retention.ts";
export * from "./privacy/rotate-message-keys.ts";
export * from "./claims/describe-claim.ts";
export * from "./claims/claim-project.ts";
export * from "./claims/purge-unclaimed-messages.ts";
export * from "./credits/project-balance.ts";
export * from "./operator/project-key.ts";
export * from "./operator/operator-support.ts";
export * from "./operator/create-live-key.ts";
export * from "./operator/revoke-api-key.ts";
export * from "./operator/suspend-project.ts";
export * from "./operator/grant-paid-credits.ts";
export * from "./operator/set-project-sender.ts";
export * from "./operator/describe-project.ts";
export * from "./operator/rotate-keys.ts";
export * from "./operator/find-projects.ts";
export * from "./operator/sender-requests.ts";
export * from "./operator/audit-log.ts";
export * from "./dashboard/identity.ts";
export * from "./dashboard/paging.ts";
export * from "./dashboard/access.ts";
export * from "./dashboard/sessions.ts";
export * from "./dashboard/projects.ts";
export * from "./dashboard/keys.ts";
export * from "./dashboard/credits.ts";
export * from "./dashboard/messages.ts";
export * from "./dashboard/usage.ts";
export * from "./dashboard/sender.ts";
export * from "./dashboard/requests.ts";
export * from "./dashboard/spending.ts";
export * from "./dashboard/project-name.ts";
export * from "./dashboard/try-send.ts";
export * from "./dashboard/onboarding.ts";
export * from "./operator/set-daily-credit-cap.ts";
export * from "./request-log/record-requests.ts";
export * from "./verifications/start-verification.ts";
export * from "./verifications/check-verification.ts";
export * from "./verifications/get-verification.ts";
export * from "./verifications/sweep-unconfirmed.ts";
export * from "./dashboard/verifications.ts";
