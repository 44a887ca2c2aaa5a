// The periodic jobs every instance runs (API or --role=worker), each on its
// own interval through the scheduler. Every job is safe with any number of
// instances: rows are claimed with FOR UPDATE SKIP LOCKED.
import type { Config } from "../config/index.ts";
import type { ApiServices } from "../services.ts";
import type { Job } from "./scheduler.ts";

export function periodicJobs(rounds: ApiServices["rounds"], config: Config): Job[] {
  return [
    { name: "status-check", intervalMs: config.statusCheck.intervalMs, run: rounds.statusCheck },
    {
      name: "queued-recovery",
      intervalMs: Math.min(config.queuedRecoveryMs, 60_000),
      run: rounds.queuedRecovery,
    },
    // The monthly partitions of messages, message_events and request_log: this
    // month and the next two kept ready, whole months dropped once every row in
    // them is past retention (before the per-row purges below reach them).
    {
      name: "partition-maintenance",
      intervalMs: config.retention.purgeIntervalMs,
      run: rounds.partitionMaintenance,
    },
    // Spec 4.1: messages of unclaimed projects are deleted 30 days after sending.
    {
      name: "unclaimed-messages-purge",
      intervalMs: config.retention.unclaimedPurgeIntervalMs,
      run: rounds.unclaimedMessagesPurge,
    },
    // Retention (docs/privacy.md): text and full numbers, idempotency records
    // after their 24 hours, rate-limit counters after their window.
    {
      name: "message-text-purge",
      intervalMs: config.retention.purgeIntervalMs,
      run: rounds.messageTextPurge,
    },
    { name: "idempotency-purge", intervalMs: config.retention.purgeIntervalMs, run: rounds.idempotencyPurge },
    { name: "rate-limit-purge", intervalMs: config.retention.purgeIntervalMs, run: rounds.rateLimitPurge },
    // Dashboard sessions past their idle expiry (they are refused before that anyway).
    {
      name: "dashboard-session-purge",
      intervalMs: config.retention.purgeIntervalMs,
      run: rounds.dashboardSessionPurge,
    },
    // MCP sessions' keys past their idle expiry (refused before that anyway).
    { name: "mcp-session-purge", intervalMs: config.retention.purgeIntervalMs, run: rounds.mcpSessionPurge },
    // The developer console's request log after REQUEST_LOG_RETENTION_DAYS.
    { name: "request-log-purge", intervalMs: config.retention.purgeIntervalMs, run: rounds.requestLogPurge },
  ];
}
