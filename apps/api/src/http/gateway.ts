// The thin wrapper around trpc-to-openapi. It owns everything the library does
// not: the request id, routing with 404/405, the body (size limit, JSON
// parsing, body-less POSTs), HEAD, the extra non-tRPC routes, the error
// envelope for every failure, and the one access-log line per request.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { newId } from "@sms/crypto";
import {
  createOpenApiNodeHttpHandler,
  forEachOpenApiProcedure,
  getInputOutputParsers,
  getPathRegExp,
  instanceofZodTypeLikeVoid,
  normalizePath,
  type OpenApiRouter,
} from "trpc-to-openapi";
import type { AppDeps } from "../deps.ts";
import type { Context, Meta, RequestState } from "../trpc/trpc.ts";
import { resolveClientAddress, type TrustProxy } from "./client-address.ts";
import { ApiError, errorResponse, isUnexpected, toApiError } from "./errors.ts";
import { readBodyText } from "./read-body.ts";

/** A route served outside tRPC (documents, pages). */
export type ExtraRoute = {
  method: "GET" | "POST";
  path: `/${string}`;
  handle(request: Request, state: RequestState, params: Record<string, string>): Promise<Response> | Response;
};

export type ConnectionInfo = { remoteAddress: string };
export type Handler = (request: Request, connection?: ConnectionInfo) => Promise<Response>;

type Route = {
  method: string;
  template: string;
  pattern: RegExp;
  procedure?: { meta: Meta; hasBody: boolean };
  extra?: ExtraRoute;
};

const STATE = Symbol("request-state");

/** Where the typed tRPC client (@sms/api-client) reaches the procedures. */
export const TRPC_ENDPOINT = "/trpc";

function routeTable(router: OpenApiRouter, extra: ExtraRoute[]): Route[] {
  const routes: Route[] = [];
  forEachOpenApiProcedure(router._def.procedures, ({ procedure, meta }) => {
    const openapi = meta.openapi;
    const { inputParser } = getInputOutputParsers(procedure as never);
    const takesBody = openapi.method !== "GET" && !instanceofZodTypeLikeVoid(inputParser as never);
    routes.push({
      method: openapi.method,
      template: normalizePath(openapi.path),
      // trpc-to-openapi matches case-insensitively; the gateway is exact.
      pattern: new RegExp(getPathRegExp(normalizePath(openapi.path)).source),
      procedure: { meta: meta as Meta, hasBody: takesBody },
    });
  });
  for (const route of extra) {
    routes.push({
      method: route.method,
      template: route.path,
      pattern: new RegExp(getPathRegExp(route.path).source),
      extra: route,
    });
  }
  return routes;
}

async function readBody(request: Request, limit: number): Promise<string | ApiError> {
  const text = await readBodyText(request, limit);
  return text ?? new ApiError("payload_too_large", `The request body is larger than ${limit} bytes.`);
}

function isJson(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(";")[0]?.trim().toLowerCase();
  return type === "application/json" || (type?.startsWith("application/") === true && type.endsWith("+json"));
}

export function createGateway(options: {
  router: OpenApiRouter;
  deps: AppDeps;
  extraRoutes?: ExtraRoute[];
  trustProxy: TrustProxy;
  maxBodyBytes: number;
}): Handler {
  const { deps } = options;
  const routes = routeTable(options.router, options.extraRoutes ?? []);

  const procedureHandler = createOpenApiNodeHttpHandler({
    router: options.router,
    maxBodySize: options.maxBodyBytes,
    createContext: ({ req }: { req: unknown }): Context => ({
      deps,
      state: (req as { [STATE]: RequestState })[STATE],
    }),
    responseMeta: ({ ctx }: { ctx?: Context }) => {
      // Never throws: the adapter calls this inside its own catch.
      const response = ctx?.state.response;
      return { status: response?.status ?? 200, headers: { ...(response?.headers ?? {}) } };
    },
    onError: ({ error, req }: { error: unknown; req: unknown }) => {
      const state = (req as { [STATE]?: RequestState })[STATE];
      if (state) state.error = error;
    },
  } as unknown as Parameters<typeof createOpenApiNodeHttpHandler>[0]);

  function callProcedure(request: Request, url: URL, body: unknown, state: RequestState): Promise<Response> {
    const headers = new Headers(request.headers);
    headers.set("content-type", "application/json");
    const method = request.method === "HEAD" ? "GET" : request.method;
    const forwarded = new Request(url, { method, headers });
    const proxy = new Proxy(forwarded, {
      get(target, prop) {
        if (prop === STATE) return state;
        if (prop === "body") return body;
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return new Promise((resolve) => {
      let status = 200;
      const responseHeaders = new Headers();
      const res = {
        setHeader(key: string, value: string | string[]) {
          if (typeof value === "string") responseHeaders.set(key, value);
          else for (const v of value) responseHeaders.append(key, v);
        },
        get statusCode() {
          return status;
        },
        set statusCode(code: number) {
          status = code;
        },
        end(text?: string) {
          resolve(new Response(status === 204 ? null : (text ?? null), { status, headers: responseHeaders }));
        },
      };
      (procedureHandler as unknown as (req: unknown, res: unknown) => Promise<void>)(proxy, res).catch(
        (error) => {
          state.error = error;
          resolve(new Response(null, { status: 500 }));
        },
      );
    });
  }

  /** The same procedures over tRPC's own protocol, for the typed @trpc/client. */
  function callTrpc(request: Request, state: RequestState): Promise<Response> {
    return fetchRequestHandler({
      endpoint: TRPC_ENDPOINT,
      req: request,
      router: options.router as never,
      createContext: (async () => ({ deps, state }) satisfies Context) as never,
      onError: ({ error }) => {
        if (isUnexpected(error)) state.log.error({ err: error }, "procedure failed");
      },
    });
  }

  async function dispatch(
    request: Request,
    state: RequestState,
    routeInfo: { template: string },
  ): Promise<Response> {
    const url = new URL(request.url);
    const path = normalizePath(url.pathname);
    if (path.startsWith(`${TRPC_ENDPOINT}/`)) {
      routeInfo.template = `${TRPC_ENDPOINT}/*`;
      const limited = await readBody(request.clone(), options.maxBodyBytes);
      if (limited instanceof ApiError) throw limited;
      return callTrpc(request, state);
    }
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
    const params = route.pattern.exec(path)?.groups ?? {};

    if (route.extra) return route.extra.handle(request, state, params);

    let body: unknown;
    if (route.procedure?.hasBody) {
      // A wrong content type or an oversized body is reported like any other
      // problem with the body: after authentication and the route's header
      // checks (the procedure's input parsing fails on the missing body, and
      // toApiError answers with this problem).
      const text = isJson(request.headers.get("content-type"))
        ? await readBody(request, options.maxBodyBytes)
        : new ApiError(
            "unsupported_media_type",
            "Send the request body as JSON with 'Content-Type: application/json'.",
          );
      if (text instanceof ApiError) {
        state.bodyProblem = text;
      } else if (text.trim() === "") {
        state.bodyError = "empty";
      } else {
        try {
          body = JSON.parse(text);
          // trpc-to-openapi spreads the body into an object, which would turn
          // [], 42 or null into {}: remember that it was not an object.
          if (body === null || typeof body !== "object" || Array.isArray(body)) {
            state.bodyError = "not_object";
            body = {};
          }
        } catch {
          state.bodyError = "malformed_json";
        }
      }
    } else if (request.body && method !== "GET") {
      // Body-less routes ignore what was sent, but never read more than the limit.
      const text = await readBody(request, options.maxBodyBytes);
      if (text instanceof ApiError) throw text;
    }

    const response = await callProcedure(request, url, body, state);
    if (state.error !== undefined) {
      if (isUnexpected(state.error)) state.log.error({ err: state.error }, "procedure failed");
      throw toApiError(state.error, route.procedure?.meta, state.bodyError, state.bodyProblem);
    }
    if (state.bodyProblem) throw state.bodyProblem;
    return response;
  }

  return async function handle(request, connection) {
    const startedAt = performance.now();
    const requestId = newId("req");
    const peer = connection?.remoteAddress ?? "127.0.0.1";
    const state: RequestState = {
      requestId,
      request,
      clientAddress: resolveClientAddress(peer, request.headers.get("x-forwarded-for"), options.trustProxy),
      log: deps.logger.child({ request_id: requestId }),
      response: { headers: {} },
    };
    const routeInfo = { template: "unmatched" };
    let response: Response;
    try {
      response = await dispatch(request, state, routeInfo);
    } catch (error) {
      if (!(error instanceof ApiError)) state.log.error({ err: error }, "request failed");
      response = errorResponse(error instanceof ApiError ? error : toApiError(error, undefined), requestId);
    }
    response.headers.set("X-Request-Id", requestId);
    if (request.method === "HEAD")
      response = new Response(null, { status: response.status, headers: response.headers });
    const status = response.status;
    state.log[status >= 500 ? "error" : "info"](
      {
        method: request.method,
        route: routeInfo.template,
        status,
        duration_ms: Math.round((performance.now() - startedAt) * 10) / 10,
        ...(state.projectId ? { project_id: state.projectId } : {}),
      },
      "request",
    );
    return response;
  };
}
