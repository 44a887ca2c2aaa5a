// The dashboard's procedures (dashboard.*), one file per area: exported from
// the package as the `dashboard` namespace, since some names (ZGetKeyRequest,
// ZGetMessageRequest, …) are also the operator's or the REST API's.
export * from "./credits.types.ts";
export * from "./keys.types.ts";
export * from "./messages.types.ts";
export * from "./projects.types.ts";
export * from "./requests.types.ts";
export * from "./sender.types.ts";
export * from "./spending.types.ts";
export * from "./try-send.types.ts";
export * from "./verifications.types.ts";
