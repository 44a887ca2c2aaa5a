// The thin wrapper around trpc-to-openapi's fetch adapter: the public port's
// handler. It owns everything the library does not: the request id, routing
// with 404/405, the body (size limit, JSON parsing, body-less POSTs), HEAD, the
// extra non-tRPC routes, the answer while the database has not been reached
// yet, the error envelope for every failure, and the one access-log line per
// request. The public port serves these routes and nothing else; tRPC's own
// protocol is on the internal listener (internal.ts).
import { newId } from "@sms/crypto";
import type { AnyProcedure, TRPCError, TRPCRouterRecord } from "@trpc/server";
import {
  createOpenApiFetchHandler,
  forEachOpenApiProcedure,
  getInputOutputParsers,
  getPathRegExp,
  instanceofZodTypeLikeVoid,
  normalizePath,
} from "trpc-to-openapi";
import type { AppDeps } from "../deps.ts";
import type { AppLogger } from "../logger.ts";
import { type ApiRouter, router as buildRouter, type Context, type Meta } from "../trpc/trpc.ts";
import { resolveClientAddress, type TrustProxy } from "./client-address.ts";
import {
  ApiError,
  type BodyError,
  databaseUnavailableError,
  errorResponse,
  isUnexpected,
  toApiError,
} from "./errors.ts";
import { readBody } from "./read-body.ts";
import { type RequestState, successResponseMeta } from "./request-state.ts";

/** A route served outside tRPC (documents, pages). */
export type ExtraRoute = {
  method: "GET" | "POST";
  path: `/${string}`;
  /** The route answers without the database (documents); pages need it by default. */
  withoutDatabase?: boolean;
  handle(request: Request, state: RequestState, params: Record<string, string>): Promise<Response> | Response;
};

export type ConnectionInfo = { remoteAddress: string };
/** What the gateway knows of a request once it is answered. */
export type FinishedRequest = {
  route: string;
  method: string;
  status: number;
  seconds: number;
  code?: string;
};

export type Handler = (request: Request, connection?: ConnectionInfo) => Promise<Response>;

/**
 * The browser pages' own answer to a failure the gateway meets on their paths
 * (no such page, a method the page does not take, the database not reached):
 * an HTML page with the error's status. Its headers (Retry-After, Allow) and
 * X-Request-Id are added to it.
 */
export type PageErrors = {
  prefix: `/${string}`;
  render(error: ApiError, requestId: string): Promise<Response>;
};

/**
 * A REST route's procedure, with a router that holds only it: the fetch
 * adapter builds its route table from the router it is given on every
 * request, so the gateway, which has already matched the route, hands it one
 * entry instead of all of them.
 */
type ProcedureRoute = { meta: Meta; takesBody: boolean; router: ApiRouter };

/** The procedure at `path` of `router` ("messages.send"), alone in a router of its own, at the same path. */
function routerOf(router: ApiRouter, path: string): ApiRouter {
  const segments = path.split(".");
  const leaf = segments.pop() ?? path;
  const record: TRPCRouterRecord = {};
  let level = record;
  for (const segment of segments) {
    const inner: TRPCRouterRecord = {};
    level[segment] = inner;
    level = inner;
  }
  const procedures: Readonly<Record<string, AnyProcedure | undefined>> = router._def.procedures;
  const procedure = procedures[path];
  if (!procedure) throw new Error(`no procedure at ${path}`);
  level[leaf] = procedure;
  return buildRouter(record);
}

type Route = { method: string; template: string; pattern: RegExp; needsDatabase: boolean } & (
  | { procedure: ProcedureRoute; extra?: undefined }
  | { extra: ExtraRoute; procedure?: undefined }
);

/**
 * What the gateway hands trpc-to-openapi as the body (JSON text, or none), and
 * what it noticed about the body the client sent.
 */
type PreparedBody = { json: string | null; bodyError?: BodyError; bodyProblem?: ApiError };

/** Stands in for a body the procedure must not see, so that its input parsing fails. */
const EMPTY_OBJECT = "{}";

function routeTable(router: ApiRouter, extra: ExtraRoute[]): Route[] {
  const routes: Route[] = [];
  forEachOpenApiProcedure<Meta>(router._def.procedures, ({ path, procedure, meta }) => {
    const openapi = meta.openapi;
    const { inputParser } = getInputOutputParsers(procedure);
    routes.push({
      method: openapi.method,
      template: normalizePath(openapi.path),
      // trpc-to-openapi matches case-insensitively; the gateway is exact.
      pattern: new RegExp(getPathRegExp(normalizePath(openapi.path)).source),
      needsDatabase: meta.withoutDatabase !== true,
      procedure: {
        meta,
        takesBody: openapi.method !== "GET" && !instanceofZodTypeLikeVoid(inputParser),
        router: routerOf(router, path),
      },
    });
  });
  for (const route of extra) {
    routes.push({
      method: route.method,
      template: route.path,
      pattern: new RegExp(getPathRegExp(route.path).source),
      needsDatabase: route.withoutDatabase !== true,
      extra: route,
    });
  }
  return routes;
}

function isJson(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(";")[0]?.trim().toLowerCase();
  return type === "application/json" || (type?.startsWith("application/") === true && type.endsWith("+json"));
}

/**
 * Reads the client's body (never more than `limit` bytes; the fetch adapter
 * has no limit of its own) and decides what the procedure is given.
 */
async function prepareBody(request: Request, route: ProcedureRoute, limit: number): Promise<PreparedBody> {
  if (!route.takesBody) {
    // Body-less routes ignore what was sent, but never read more than the limit.
    if (request.body && request.method !== "GET" && request.method !== "HEAD") {
      const text = await readBody(request, limit);
      if (text instanceof ApiError) throw text;
    }
    return { json: null };
  }
  // A wrong content type or an oversized body is reported like any other
  // problem with the body: after authentication and the route's header checks.
  // The procedure runs on an empty object, its input parsing fails, and
  // toApiError answers with the problem noted here.
  if (!isJson(request.headers.get("content-type"))) {
    const problem = new ApiError(
      "unsupported_media_type",
      "Send the request body as JSON with 'Content-Type: application/json'.",
    );
    return { json: EMPTY_OBJECT, bodyProblem: problem };
  }
  const text = await readBody(request, limit);
  if (text instanceof ApiError) return { json: EMPTY_OBJECT, bodyProblem: text };
  if (text.trim() === "") return { json: EMPTY_OBJECT, bodyError: "empty" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { json: EMPTY_OBJECT, bodyError: "malformed_json" };
  }
  // trpc-to-openapi spreads the body into an object, which would turn [], 42
  // or null into {}: remember that it was not an object.
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { json: EMPTY_OBJECT, bodyError: "not_object" };
  }
  return { json: text };
}

/**
 * The request trpc-to-openapi sees: the client's method (GET for HEAD) and URL,
 * and the prepared JSON body. A POST always says `Content-Type:
 * application/json` (the adapter answers 415 otherwise, even for a body-less
 * route). Procedures read the client's headers from `ctx.state.request`.
 */
function adapterRequest(request: Request, json: string | null): Request {
  const method = request.method === "HEAD" ? "GET" : request.method;
  if (method === "GET") return new Request(request.url, { method });
  return new Request(request.url, { method, headers: { "Content-Type": "application/json" }, body: json });
}

export function createGateway(options: {
  router: ApiRouter;
  deps: AppDeps;
  extraRoutes: ExtraRoute[];
  trustProxy: TrustProxy;
  maxBodyBytes: number;
  /** Called once per request after its access-log line (metrics). */
  onFinished: (request: FinishedRequest) => void;
  /** False until the database has first been reached (and migrated). */
  databaseStarted: () => boolean;
  /** HTML answers for failures under the pages' paths (/dashboard, /claim); everything else gets the envelope. */
  pageErrors?: PageErrors[];
}): Handler {
  const { deps } = options;
  const routes = routeTable(options.router, options.extraRoutes);

  // The fetch adapters take their options per request, so the context and the
  // error are closures over this request's state: nothing is attached to the
  // Request (the REST adapter hands createContext its own wrapper of it, not
  // the Request the gateway built).

  /** A REST route: trpc-to-openapi, with errors rewritten into the envelope. */
  async function callProcedure(
    request: Request,
    route: ProcedureRoute,
    state: RequestState,
  ): Promise<Response> {
    const body = await prepareBody(request, route, options.maxBodyBytes);
    const context: Context = { deps, state };
    const errors: TRPCError[] = [];
    const response = await createOpenApiFetchHandler({
      router: route.router,
      // A plain string replace on the whole URL: only "/" is safe (see
      // shared/notes/trpc-to-openapi.md); meta.openapi.path holds /v1/....
      endpoint: "/",
      req: adapterRequest(request, body.json),
      createContext: () => context,
      // Neither callback may throw: the adapter calls them inside its own catch.
      responseMeta: ({ errors: failed }) => (failed.length === 0 ? successResponseMeta(state) : {}),
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    const error = errors[0];
    if (error !== undefined) {
      if (isUnexpected(error)) state.log.error({ err: error }, "procedure failed");
      throw toApiError(error, route.meta, body.bodyError, body.bodyProblem);
    }
    if (body.bodyProblem) throw body.bodyProblem;
    return response;
  }

  async function dispatch(
    request: Request,
    state: RequestState,
    routeInfo: { template: string },
  ): Promise<Response> {
    const url = new URL(request.url);
    const path = normalizePath(url.pathname);
    const method = request.method === "HEAD" ? "GET" : request.method;
    const matching = routes.filter((route) => route.pattern.test(path));
    if (matching.length === 0) {
      throw new ApiError(
        "route_not_found",
        `No route ${request.method} ${url.pathname}. See /docs for the API reference.`,
      );
    }
    const route = matching.find((candidate) => candidate.method === method);
    if (!route) {
      const allow = [...new Set(matching.map((candidate) => candidate.method))];
      if (allow.includes("GET")) allow.push("HEAD");
      throw new ApiError(
        "method_not_allowed",
        `${request.method} is not allowed here. Allowed: ${allow.join(", ")}.`,
        {
          Allow: allow.join(", "),
        },
      );
    }
    routeInfo.template = route.template;
    if (route.needsDatabase && !options.databaseStarted()) {
      throw databaseUnavailableError();
    }
    if (route.extra) return route.extra.handle(request, state, route.pattern.exec(path)?.groups ?? {});
    return callProcedure(request, route.procedure, state);
  }

  /** The pages' HTML for a failure under their paths; null elsewhere (the envelope). Only runs on a failure. */
  async function errorPage(request: Request, error: ApiError, requestId: string): Promise<Response | null> {
    const path = new URL(request.url).pathname;
    const pages = options.pageErrors?.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`));
    return pages ? pages.render(error, requestId) : null;
  }

  return async function handle(request, connection) {
    const peer = connection?.remoteAddress ?? "127.0.0.1";
    const clientAddress = resolveClientAddress(
      peer,
      request.headers.get("x-forwarded-for"),
      options.trustProxy,
    );
    const { response, finished } = await frameRequest(
      deps.logger,
      request,
      clientAddress,
      (state, route) => dispatch(request, state, route),
      { errorPage },
    );
    options.onFinished(finished);
    return response;
  };
}

/**
 * One request's frame, on either listener: its id and state, the envelope for
 * any failure (or `errorPage`'s HTML, with the error's headers), `X-Request-Id`,
 * no body for HEAD, and its one access-log line (`fields`: the listener's own,
 * first).
 */
export async function frameRequest(
  logger: AppLogger,
  request: Request,
  clientAddress: string,
  dispatch: (state: RequestState, route: { template: string }) => Promise<Response>,
  options: {
    fields?: Readonly<Record<string, string>>;
    /** An HTML answer for a failure instead of the envelope (null: the envelope). */
    errorPage?: (request: Request, error: ApiError, requestId: string) => Promise<Response | null>;
  } = {},
): Promise<{ response: Response; finished: FinishedRequest }> {
  const fields = options.fields ?? {};
  const startedAt = performance.now();
  const requestId = newId("req");
  const state: RequestState = {
    requestId,
    request,
    clientAddress,
    log: logger.child({ request_id: requestId }),
  };
  const route = { template: "unmatched" };
  let response: Response;
  let code: string | undefined;
  try {
    response = await dispatch(state, route);
  } catch (error) {
    if (!(error instanceof ApiError)) state.log.error({ err: error }, "request failed");
    const apiError = error instanceof ApiError ? error : toApiError(error, undefined);
    code = apiError.code;
    response = errorResponse(apiError, requestId);
    if (options.errorPage) {
      try {
        const page = await options.errorPage(request, apiError, requestId);
        if (page) {
          for (const [name, value] of Object.entries(apiError.headers)) page.headers.set(name, value);
          response = page;
        }
      } catch (pageError) {
        state.log.error({ err: pageError }, "error page failed; answering with the envelope");
      }
    }
  }
  response.headers.set("X-Request-Id", requestId);
  if (request.method === "HEAD")
    response = new Response(null, { status: response.status, headers: response.headers });
  const status = response.status;
  const durationMs = performance.now() - startedAt;
  state.log[status >= 500 ? "error" : "info"](
    {
      ...fields,
      method: request.method,
      route: route.template,
      status,
      duration_ms: Math.round(durationMs * 10) / 10,
      ...(state.projectId ? { project_id: state.projectId } : {}),
    },
    "request",
  );
  return {
    response,
    finished: { route: route.template, method: request.method, status, seconds: durationMs / 1000, code },
  };
}
