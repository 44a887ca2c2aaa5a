// The internal listener's handler (INTERNAL_PORT, loopback by default): the
// same procedures as the REST routes, over tRPC's own protocol at /trpc/*, for
// internal tools and the typed client (internal-client.ts), and the Prometheus
// metrics at GET /metrics. Never served on the public port.
//
// Every request must carry `Authorization: Bearer <INTERNAL_API_TOKEN>`
// (compared in constant time; a wrong or missing token answers 401 in the
// envelope and is never logged). A project's API key, where a procedure needs
// one, travels in `X-Api-Key`; the operator a tool acts for, in `X-Operator`. Batching is off (one procedure per request), and
// bodies have the public port's size limit and deadline. Transport-level
// failures (401, 404, 413, 408, the database not reached yet) use the envelope;
// a procedure's own errors keep tRPC's shape with our `apiCode` and `requestId`
// in `error.data` (trpc/trpc.ts).
import { INTERNAL_API_KEY_HEADER, INTERNAL_OPERATOR_HEADER, TRPC_ENDPOINT } from "@sms/contract";
import { sha256Hex, timingSafeEqual } from "@sms/crypto";
import type { AnyProcedure } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { ApiError } from "../contract/api-error.ts";
import type { AppDeps } from "../deps.ts";
import type { RequestState } from "../trpc/request-state.ts";
import type { ApiRouter, Context, Meta } from "../trpc/trpc.ts";
import { databaseUnavailableError, isUnexpected } from "./errors.ts";
import { echoed, frameRequest, type Handler, hostMissingError } from "./gateway.ts";
import { readBody } from "./read-body.ts";

/** Where Prometheus scrapes (with the same bearer token: `authorization` in its scrape config). */
const METRICS_ENDPOINT = "/metrics";

const UNAUTHORIZED_MESSAGE = "This listener is internal: send 'Authorization: Bearer <INTERNAL_API_TOKEN>'.";

export function createInternalHandler(options: {
  router: ApiRouter;
  deps: AppDeps;
  token: string;
  maxBodyBytes: number;
  /** False until the database has first been reached. */
  databaseStarted: () => boolean;
  /** The Prometheus exposition, served at GET /metrics. */
  metrics: () => Promise<Response>;
}): Handler {
  const { deps, router } = options;
  // Both sides are hashed first: the comparison then takes the same time
  // whatever the length or content of what was presented.
  const expected = sha256Hex(options.token);
  const procedures: Readonly<Record<string, AnyProcedure | undefined>> = router._def.procedures;
  /** Procedures that answer before the database has first been reached (Meta.withoutDatabase, as on the public port). */
  const withoutDatabase = new Set(
    Object.entries(procedures)
      .filter(([, procedure]) => (procedure?._def.meta as Meta | undefined)?.withoutDatabase === true)
      .map(([name]) => name),
  );

  async function authorized(request: Request): Promise<boolean> {
    const header = request.headers.get("authorization") ?? "";
    const presented = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
    return timingSafeEqual(await sha256Hex(presented), await expected);
  }

  async function dispatch(request: Request, state: RequestState, routeInfo: { template: string }) {
    if (!(await authorized(request))) {
      throw new ApiError("unauthorized", UNAUTHORIZED_MESSAGE, { "WWW-Authenticate": "Bearer" });
    }
    const url = new URL(request.url);
    if (url.pathname === METRICS_ENDPOINT) {
      routeInfo.template = METRICS_ENDPOINT;
      if (request.method !== "GET") {
        throw new ApiError("method_not_allowed", `${request.method} is not allowed here. Allowed: GET.`, {
          Allow: "GET",
        });
      }
      return options.metrics();
    }
    const name = url.pathname.startsWith(`${TRPC_ENDPOINT}/`)
      ? url.pathname.slice(TRPC_ENDPOINT.length + 1)
      : null;
    if (name === null) {
      throw new ApiError(
        "route_not_found",
        `No route ${echoed(request.method)} ${echoed(url.pathname)}. Procedures are under /trpc/; metrics at /metrics.`,
      );
    }
    routeInfo.template = procedures[name] ? `${TRPC_ENDPOINT}/${name}` : `${TRPC_ENDPOINT}/*`;
    if (!withoutDatabase.has(name) && !options.databaseStarted()) {
      throw databaseUnavailableError();
    }
    // tRPC reads bodies without a limit: read it here and hand tRPC a copy.
    const takesBody = request.method !== "GET" && request.method !== "HEAD";
    const text = takesBody ? await readBody(request, options.maxBodyBytes) : null;
    if (text instanceof ApiError) throw text;
    // The procedures read the project's API key from Authorization.
    const headers = new Headers(request.headers);
    headers.delete("content-length");
    headers.delete("authorization");
    const apiKey = request.headers.get(INTERNAL_API_KEY_HEADER);
    if (apiKey !== null) headers.set("authorization", `Bearer ${apiKey}`);
    headers.delete(INTERNAL_API_KEY_HEADER);
    const operator = request.headers.get(INTERNAL_OPERATOR_HEADER);
    headers.delete(INTERNAL_OPERATOR_HEADER);
    const copy = new Request(request.url, { method: request.method, headers, body: takesBody ? text : null });
    state.request = copy;
    // Internal tools print to a terminal: refusals are worded for one.
    const context: Context = {
      deps,
      state,
      register: "terminal",
      ...(operator !== null ? { toolOperator: { actor: operator } } : {}),
    };
    return fetchRequestHandler({
      endpoint: TRPC_ENDPOINT,
      req: copy,
      router,
      allowBatching: false,
      createContext: () => context,
      onError: ({ error }) => {
        if (isUnexpected(error)) state.log.error({ err: error }, "procedure failed");
      },
    });
  }

  return async function handle(request, connection) {
    // Internal callers are not rate-limited by a forwarded address.
    const clientAddress = connection?.remoteAddress ?? "127.0.0.1";
    const { response } = await frameRequest(
      deps.logger,
      request,
      clientAddress,
      (state, route) => dispatch(request, state, route),
      {
        fields: { listener: "internal" },
        ...(connection?.hostMissing ? { refusal: hostMissingError() } : {}),
      },
    );
    return response;
  };
}
