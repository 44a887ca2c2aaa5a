// The audit log: who changed what, written by every operator action (the
// command-line tool and the dashboard call the same domain functions) and by
// every change an account holder makes on the dashboard.

export const AUDIT_ACTIONS = [
  "api_key.created",
  "api_key.revoked",
  "project.suspended",
  "project.reinstated",
  "credits.granted",
  "sender.set",
  "sender.cleared",
  "project.viewed",
  "message_keys.rotated",
  "test_key.rolled",
  "sender.requested",
  "sender.request_approved",
  "sender.request_refused",
  "project.spending_set",
  "project.named",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Who may act, as written to the audit log: an operator's name or OS user
 * (the command-line tool), or a signed-in identity as `provider:subject`
 * (the dashboard: `github:583231`, `google:1082…`, `dev:alice`).
 */
export const ACTOR_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@+:-]{0,127}$/;
