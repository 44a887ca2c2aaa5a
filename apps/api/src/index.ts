// @sms/api's entry for other workspace packages: the router's type (for
// internal tRPC clients) and the composition root. The service itself starts
// from main.ts. (@sms/api-client, for integrators, uses the REST routes.)
export type { AppRouter } from "./router.ts";
export { type App, createApp } from "./app.ts";
export { type Config, parseEnv } from "./env.ts";
export { TRPC_ENDPOINT } from "./http/gateway.ts";
