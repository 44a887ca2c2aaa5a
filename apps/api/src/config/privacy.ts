// What the service keeps and for how long: the message-text keyring, the
// retention of texts and of the request log, and the purge rounds.
import { DEFAULT_PURGE_BATCH_SIZE } from "@sms/domain";
import { z } from "zod";
import type { TServiceEnv } from "./service.ts";
import { bool, DAY_MS, int, optionalString, requiredInProduction, SECOND_MS } from "./shared.ts";

export const ZPrivacyEnv = z.object({
  /** Comma-separated "<id>:<base64 32 bytes>"; the first encrypts, all decrypt. */
  MESSAGE_ENCRYPTION_KEYS: optionalString,
  MESSAGE_TEXT_RETENTION_DAYS: int(7, 1, 3650),
  /** How long the developer console's request log keeps a request (docs/dashboard.md#request-log). */
  REQUEST_LOG_RETENTION_DAYS: int(30, 1, 3650),
  /** Whether API requests are recorded for the request log at all (docs/dashboard.md#request-log). */
  REQUEST_LOG_ENABLED: bool(true),
  PURGE_INTERVAL_SECONDS: int(600, 1, 86_400),
  PURGE_BATCH_SIZE: int(DEFAULT_PURGE_BATCH_SIZE, 1, 10_000),
  UNCLAIMED_PURGE_INTERVAL_SECONDS: int(3600, 1, 86_400),
});
export type TPrivacyEnv = z.output<typeof ZPrivacyEnv>;

export function privacyConfig(env: TPrivacyEnv & Pick<TServiceEnv, "NODE_ENV">) {
  requiredInProduction(env.NODE_ENV === "production", "MESSAGE_ENCRYPTION_KEYS", env.MESSAGE_ENCRYPTION_KEYS);
  return {
    /** The keyring spec; undefined outside production means a development key (app.ts). */
    messageEncryptionKeys: env.MESSAGE_ENCRYPTION_KEYS,
    /** Whether answered API requests are recorded for the developer console's request log. */
    requestLogEnabled: env.REQUEST_LOG_ENABLED,
    retention: {
      messageTextMs: env.MESSAGE_TEXT_RETENTION_DAYS * DAY_MS,
      requestLogMs: env.REQUEST_LOG_RETENTION_DAYS * DAY_MS,
      purgeIntervalMs: env.PURGE_INTERVAL_SECONDS * SECOND_MS,
      purgeBatchSize: env.PURGE_BATCH_SIZE,
      unclaimedPurgeIntervalMs: env.UNCLAIMED_PURGE_INTERVAL_SECONDS * SECOND_MS,
    },
  };
}
