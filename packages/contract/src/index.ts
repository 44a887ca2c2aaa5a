// @sms/contract: one declaration per wire shape. The vocabulary the wire is
// built from, the Idempotency-Key rule, the error codes and the documented
// headers; the REST routes' schemas and metadata; the records and procedures
// of the dashboard, the pages and the operator; and the types the pages read
// (views.ts). Imports nothing of ours but @sms/templates.

// The REST API (spec sections 2–4; the verifications extension; the conditional reads extension).
export * from "./conditional-read.types.ts";
// The internal procedures: the records both the dashboard and the operator return, then each router's own.
export * from "./dashboard/cursor.types.ts";
export * as dashboard from "./dashboard/procedures.ts";
export * from "./dashboard/records.types.ts";
export * from "./errors.ts";
export * from "./headers.ts";
export * from "./health/health.types.ts";
export * from "./idempotency-key.ts";
export * from "./messages/get-message.types.ts";
export * from "./messages/message.types.ts";
export * from "./messages/send-message.types.ts";
export * from "./meta.ts";
export * as operator from "./operator/operator.types.ts";
export * from "./pages/pages.types.ts";
export * from "./test-keys/create-test-key.types.ts";
export * from "./verifications/check-verification.types.ts";
export * from "./verifications/get-verification.types.ts";
export * from "./verifications/start-verification.types.ts";
export * from "./verifications/verification.types.ts";
// What the pages read (@sms/web), under the names the views use.
export type * from "./views.ts";
export * from "./vocabulary.ts";
