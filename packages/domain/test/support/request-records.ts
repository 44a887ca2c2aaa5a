// A request log record for tests: a test key's read of a message by default,
// `overrides` for the rest.
import { newId } from "@sms/crypto";
import type { RequestRecord } from "../../src/store/index.ts";

export function aRequestRecord(
  overrides: Partial<RequestRecord> & Pick<RequestRecord, "projectId">,
): RequestRecord {
  return {
    id: newId("req"),
    keyId: null,
    mode: "test",
    method: "GET",
    route: "/v1/messages/{id}",
    status: 200,
    errorCode: null,
    idempotencyKey: null,
    replayed: false,
    durationMs: 3,
    messageId: null,
    verificationId: null,
    createdAt: new Date(),
    ...overrides,
  };
}
