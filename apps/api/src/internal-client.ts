// The typed tRPC client for internal tools: the service's procedures over
// tRPC's protocol on the INTERNAL listener (INTERNAL_PORT, loopback by
// default; see http/internal.ts), with the router's types.
//
//   const sms = createInternalClient({ baseUrl: "http://127.0.0.1:3001", token, apiKey });
//   const message = await sms.messages.send.mutate(
//     { to: "+995555123456", template: "verification_code", variables: { code: "4821" } },
//     { context: { idempotencyKey: "signup-42" } },
//   );
//   await sms.messages.get.query({ message_id: message.id });
//
// Failures are TRPCClientError; apiErrorCode(error) gives our stable code (a
// procedure's refusal, or the envelope of a transport-level failure such as a
// wrong token), apiRequestId(error) the request id the service logged it under.
import { INTERNAL_API_KEY_HEADER, INTERNAL_OPERATOR_HEADER, TRPC_ENDPOINT } from "@sms/contract";
import { createTRPCClient, httpLink, isTRPCClientError, type TRPCClient } from "@trpc/client";
import type { ToolsRouter } from "./tools-router.ts";

export type InternalClient = TRPCClient<ToolsRouter>;

/** What a call may carry in `{ context }`. */
export type InternalCallContext = {
  /** Sent as `Idempotency-Key` (required by messages.send: one per logical send). */
  idempotencyKey?: string;
};

export type InternalClientOptions = {
  /** The internal listener's address, e.g. `http://127.0.0.1:3001` (no trailing `/trpc`). */
  baseUrl: string;
  /** INTERNAL_API_TOKEN, sent as `Authorization: Bearer …` on every call. */
  token: string;
  /** A project's `sk_test_…`/`sk_live_…`, sent as `X-Api-Key`; omit for the public procedures. */
  apiKey?: string;
  /** The operator the calls act for (operator.*), written to the audit rows; sent as `X-Operator`. */
  operator?: string;
  /** A fetch to use instead of the global one (tests, in-process calls). */
  fetch?: (input: Request | string | URL, init?: RequestInit) => Promise<Response>;
};

export function createInternalClient(options: InternalClientOptions): InternalClient {
  const url = `${options.baseUrl.replace(/\/+$/, "")}${TRPC_ENDPOINT}`;
  return createTRPCClient<ToolsRouter>({
    links: [
      httpLink({
        url,
        ...(options.fetch ? { fetch: options.fetch as never } : {}),
        headers: ({ op }) => {
          const context = op.context as InternalCallContext;
          const headers: Record<string, string> = { Authorization: `Bearer ${options.token}` };
          if (options.apiKey) headers[INTERNAL_API_KEY_HEADER] = options.apiKey;
          if (options.operator !== undefined) headers[INTERNAL_OPERATOR_HEADER] = options.operator;
          if (typeof context.idempotencyKey === "string") headers["Idempotency-Key"] = context.idempotencyKey;
          return headers;
        },
      }),
    ],
  });
}

type ErrorData = { apiCode?: unknown; requestId?: unknown };
type Envelope = { error?: { code?: unknown; request_id?: unknown } };

function details(error: unknown): { code: unknown; requestId: unknown } | null {
  if (!isTRPCClientError(error)) return null;
  const data = error.data as ErrorData | undefined;
  if (data?.apiCode !== undefined) return { code: data.apiCode, requestId: data.requestId };
  // A transport-level failure (wrong token, body too large, …) answers in the envelope.
  const envelope = (error.meta as { responseJSON?: Envelope } | undefined)?.responseJSON?.error;
  return envelope ? { code: envelope.code, requestId: envelope.request_id } : null;
}

/** Our stable error code (`unauthorized`, `message_not_found`, …), or null for a non-API failure. */
export function apiErrorCode(error: unknown): string | null {
  const code = details(error)?.code;
  return typeof code === "string" ? code : null;
}

/** The request id the service logged the failed call under (its X-Request-Id), or null. */
export function apiRequestId(error: unknown): string | null {
  const id = details(error)?.requestId;
  return typeof id === "string" ? id : null;
}
