// The audit log: who changed what, written by every operator action (the
// command-line tool and the dashboard call the same domain functions).

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
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who may act: an operator's name or OS user, written to the audit log. */
export const ACTOR_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$/;
