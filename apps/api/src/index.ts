// @sms/api's entry for other workspace packages: the router's type, the typed
// client for the internal listener, and the composition root. The service
// itself starts from main.ts. (@sms/api-client, for integrators, uses the REST routes.)
export type { AppRouter } from "./router.ts";
export { type App, createApp } from "./app.ts";
export { type Config, parseEnv } from "./env.ts";
export { INTERNAL_API_KEY_HEADER, TRPC_ENDPOINT } from "./http/internal.ts";
export {
  apiErrorCode,
  apiRequestId,
  createInternalClient,
  type InternalCallContext,
  type InternalClient,
  type InternalClientOptions,
} from "./internal-client.ts";
