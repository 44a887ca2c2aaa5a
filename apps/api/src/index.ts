// @sms/api's entry for internal tools and other workspace packages: the
// routers' types, the typed @trpc/client for the internal listener, the
// configuration (a tool runs with the service's), and the wording a terminal
// shows. Light on purpose: the service itself starts from main.ts, whose
// composition root (app.ts) nothing else imports. (@sms/api-client, for
// integrators, uses the REST routes.)

export { INTERNAL_API_KEY_HEADER, INTERNAL_OPERATOR_HEADER, TRPC_ENDPOINT } from "@sms/contract";
export { type Config, ConfigError, parseEnv } from "./config/index.ts";
export { INPUT_RULES, type Register, refusalText } from "./contract/refusals.ts";
export { readDevelopmentFile } from "./development-files.ts";
export {
  apiErrorCode,
  apiRequestId,
  createInternalClient,
  type InternalCallContext,
  type InternalClient,
  type InternalClientOptions,
} from "./internal-client.ts";
export { scrubText } from "./logger.ts";
export type { AppRouter } from "./router.ts";
export type { ToolsRouter } from "./tools-router.ts";
