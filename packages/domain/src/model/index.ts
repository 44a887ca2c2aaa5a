// "@sms/domain/model": the domain's types and pure rules alone (no I/O, no
// database), for packages that need a fact of the domain without its use
// cases: the providers, the pages.
export * from "./audit.ts";
export * from "./credits.ts";
export * from "./idempotency.ts";
export * from "./keys.ts";
export * from "./limits.ts";
export * from "./message.ts";
export * from "./recipient.ts";
export * from "./time.ts";
export * from "./verification.ts";
