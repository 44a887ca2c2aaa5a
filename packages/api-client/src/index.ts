// @sms/api-client: a typed tRPC client for internal tools. It reaches the same
// procedures as the public REST API, over tRPC's own protocol at
// `${baseUrl}/trpc`, with the router's types from @sms/api.
//
//   const sms = createSmsApiClient({ baseUrl: "https://sms.example.ge", apiKey });
//   const message = await sms.messages.send.mutate(
//     { to: "+995555123456", template: "verification_code", variables: { code: "4821" } },
//     { context: { idempotencyKey: "signup-42" } },
//   );
//   await sms.messages.get.query({ message_id: message.id });
//
// Failures are TRPCClientError; `apiErrorCode(error)` gives our stable code
// (the same as `error.code` of the REST envelope, spec 7).
import { createTRPCClient, httpLink, isTRPCClientError, type TRPCClient } from "@trpc/client";
import type { AppRouter } from "@sms/api";

export { isTRPCClientError, TRPCClientError } from "@trpc/client";
export type { AppRouter } from "@sms/api";

export type SmsApiClient = TRPCClient<AppRouter>;

/** What a call may carry in `{ context }`. */
export type SmsCallContext = {
  /** Sent as `Idempotency-Key` (required by messages.send: 1–200 characters, one per logical send). */
  idempotencyKey?: string;
};

export type SmsApiClientOptions = {
  /** The service's base address, e.g. `https://sms.example.ge` (no trailing `/trpc`). */
  baseUrl: string;
  /** `sk_test_…` or `sk_live_…`; omit for the public procedures (health, testKeys.create). */
  apiKey?: string;
  /** A fetch to use instead of the global one (tests, proxies, custom agents). */
  fetch?: (input: Request | string | URL, init?: RequestInit) => Promise<Response>;
};

/** Where the procedures are served; matches TRPC_ENDPOINT of @sms/api. */
export const TRPC_PATH = "/trpc";

export function createSmsApiClient(options: SmsApiClientOptions): SmsApiClient {
  const url = `${options.baseUrl.replace(/\/+$/, "")}${TRPC_PATH}`;
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url,
        ...(options.fetch ? { fetch: options.fetch as never } : {}),
        headers: ({ op }) => {
          const context = op.context as SmsCallContext;
          const headers: Record<string, string> = {};
          if (options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`;
          if (typeof context.idempotencyKey === "string") headers["Idempotency-Key"] = context.idempotencyKey;
          return headers;
        },
      }),
    ],
  });
}

type ErrorData = { apiCode?: unknown; requestId?: unknown; httpStatus?: unknown };

/** Our stable error code (`insufficient_credits`, `invalid_api_key`, …), or null for a non-API failure. */
export function apiErrorCode(error: unknown): string | null {
  if (!isTRPCClientError(error)) return null;
  const code = (error.data as ErrorData | undefined)?.apiCode;
  return typeof code === "string" ? code : null;
}

/** The request id the service logged the failed call under (its X-Request-Id), or null. */
export function apiRequestId(error: unknown): string | null {
  if (!isTRPCClientError(error)) return null;
  const id = (error.data as ErrorData | undefined)?.requestId;
  return typeof id === "string" ? id : null;
}
