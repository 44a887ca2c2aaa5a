// The public port's handler. Its REST routes are the tRPC procedures that
// trpc-to-openapi maps (meta.openapi): the route table, path matching and the
// OpenAPI document come from trpc-to-openapi; the gateway calls the matched
// procedure with tRPC's own server-side call (callTRPCProcedure), composing
// its input the way trpc-to-openapi's adapters do (body or query, plus path
// parameters). It owns everything else: the request id, routing with 404/405,
// the body (size limit, one JSON parse, body-less POSTs), HEAD, the extra
// non-tRPC routes, the answer while the database has not been reached yet, the
// error envelope for every failure, and the one access-log line per request.
// The public port serves these routes and nothing else; tRPC's own protocol is
// on the internal listener (internal.ts).
//
// Why not trpc-to-openapi's fetch adapter: per request it rebuilt its route
// table, parsed the URL twice, re-read and re-parsed the body the gateway had
// already read, and needed a second Request built for it: about a fifth of a
// replay's CPU (bench/log/2026-11-24.md#latest, issue 15).
import { newId } from "@sms/crypto";
import { type Slots, SlotWaitTimeout } from "@sms/domain";
import { callTRPCProcedure, getTRPCErrorFromUnknown, type ProcedureType } from "@trpc/server";
import {
  coerceSchema,
  forEachOpenApiProcedure,
  getInputOutputParsers,
  getPathRegExp,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  normalizePath,
  unwrapZodType,
} from "trpc-to-openapi";
import { ApiError } from "../contract/api-error.ts";
import { REFUSAL_MESSAGES } from "../contract/wording.ts";
import type { AppDeps } from "../deps.ts";
import type { AppLogger } from "../logger.ts";
import { newRequestState, type RequestState, successResponseMeta } from "../trpc/request-state.ts";
import type { ApiRouter, Context, Meta } from "../trpc/trpc.ts";
import { resolveClientAddress, type TrustProxy } from "./client-address.ts";
import { answerConditionally, type ConditionalReads, type ProcedureAnswer } from "./conditional-read.ts";
import {
  type BodyError,
  databaseUnavailableError,
  errorResponse,
  isUnexpected,
  toApiError,
} from "./errors.ts";
import { headerLineCount } from "./header-lines.ts";
import { ClientClosedRequest, readBody } from "./read-body.ts";

/** A route served outside tRPC (documents, pages). */
export type ExtraRoute = {
  method: "GET" | "POST" | "DELETE";
  path: `/${string}`;
  /** The route answers without the database (documents); pages need it by default. */
  withoutDatabase?: boolean;
  handle(request: Request, state: RequestState, params: Record<string, string>): Promise<Response> | Response;
};

export type ConnectionInfo = {
  remoteAddress: string;
  /** The request came without a `Host` header (the server answers it 400, RFC 9112 §3.2). */
  hostMissing?: boolean;
};

/** The 400 for a request without `Host`, on either listener (the server passes `hostMissing`). */
export function hostMissingError(): ApiError {
  return new ApiError("invalid_request", REFUSAL_MESSAGES.host_missing);
}
/** What the gateway knows of a request once it is answered. */
export type FinishedRequest = {
  route: string;
  method: string;
  status: number;
  seconds: number;
  code?: string;
  /** Held by `Prefer: wait`: `seconds` is mostly the hold (the latency histogram leaves it out). */
  held: boolean;
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

/** The read routes' turns (Meta.readTurn): as many slots as the pool they read from has connections. */
export type ReadTurns = { slots: Slots; timeoutMs: number };

/** A REST route's procedure: where it is in the router, and how its input is composed. */
type ProcedureRoute = {
  meta: Meta;
  /** "messages.send" */
  path: string;
  type: ProcedureType;
  /** The procedure has an input (not void): it gets the body or the query, plus path parameters. */
  takesInput: boolean;
  /** The input comes from a JSON body (a POST with an input), not the query. */
  takesBody: boolean;
};

type Route = { method: string; template: string; pattern: RegExp; needsDatabase: boolean } & (
  | { procedure: ProcedureRoute; extra?: undefined }
  | { extra: ExtraRoute; procedure?: undefined }
);

/**
 * The body the procedure's input is made of (a JSON object, or none), and what
 * the gateway noticed about the body the client sent.
 */
type PreparedBody = { value: Record<string, unknown> | null; bodyError?: BodyError; bodyProblem?: ApiError };

/** Stands in for a body the procedure must not see, so that its input parsing fails. */
const emptyObject = (): Record<string, unknown> => ({});

function routeTable(router: ApiRouter, extra: ExtraRoute[]): Route[] {
  const routes: Route[] = [];
  forEachOpenApiProcedure<Meta>(router._def.procedures, ({ path, procedure, meta }) => {
    const openapi = meta.openapi;
    const { inputParser } = getInputOutputParsers(procedure);
    const input = unwrapZodType(inputParser, true);
    const takesInput = !instanceofZodTypeLikeVoid(input);
    // As trpc-to-openapi's adapters do (once here, not per request): number,
    // boolean and date fields of a query's object input accept their string
    // forms, since a query has nothing else. A JSON body has real numbers, so
    // a body's "6" for a number stays a string and is refused (issue 53:
    // `code_length: "6"` was accepted).
    if (takesInput && openapi.method === "GET" && instanceofZodTypeObject(input)) coerceSchema(input);
    routes.push({
      method: openapi.method,
      template: normalizePath(openapi.path),
      // trpc-to-openapi matches case-insensitively; the gateway is exact.
      pattern: new RegExp(getPathRegExp(normalizePath(openapi.path)).source),
      needsDatabase: meta.withoutDatabase !== true,
      procedure: {
        meta,
        path,
        type: procedure._def.type,
        takesInput,
        takesBody: takesInput && openapi.method !== "GET",
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

/**
 * Headers that must arrive in one line: two `Idempotency-Key` lines would be
 * read as one key "k, k" (and a later retry with one line would send again);
 * two `Authorization` lines are two credentials.
 */
const SINGLE_LINE_HEADERS = ["Authorization", "Idempotency-Key"] as const;

/** 400 invalid_request naming the header, when one of SINGLE_LINE_HEADERS came more than once. */
function refuseRepeatedHeaders(headers: Headers): void {
  for (const name of SINGLE_LINE_HEADERS) {
    const lines = headerLineCount(headers, name);
    if (lines > 1) {
      throw new ApiError(
        "invalid_request",
        `The '${name}' header was sent ${lines} times: send it exactly once.`,
      );
    }
  }
}

/** The most of a client's method or path an error message repeats (a 51 KB URL must not give a 51 KB answer). */
export const MAX_ECHOED_LENGTH = 200;

/** `text` as an error message repeats it: at most MAX_ECHOED_LENGTH characters, then "…". */
export function echoed(text: string): string {
  return text.length <= MAX_ECHOED_LENGTH ? text : `${text.slice(0, MAX_ECHOED_LENGTH)}…`;
}

function isJson(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(";")[0]?.trim().toLowerCase();
  return type === "application/json" || (type?.startsWith("application/") === true && type.endsWith("+json"));
}

/**
 * Reads the client's body (never more than `limit` bytes) and decides what the
 * procedure is given.
 */
async function prepareBody(request: Request, route: ProcedureRoute, limit: number): Promise<PreparedBody> {
  if (!route.takesBody) {
    // Body-less routes ignore what was sent, but never read more than the limit.
    if (request.body && request.method !== "GET" && request.method !== "HEAD") {
      const text = await readBody(request, limit);
      if (text instanceof ApiError) throw text;
    }
    return { value: null };
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
    return { value: emptyObject(), bodyProblem: problem };
  }
  const text = await readBody(request, limit);
  if (text instanceof ApiError) return { value: emptyObject(), bodyProblem: text };
  if (text.trim() === "") return { value: emptyObject(), bodyError: "empty" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { value: emptyObject(), bodyError: "malformed_json" };
  }
  // The input is the body spread into an object with the path parameters,
  // which would turn [], 42 or null into {}: remember that it was not an object.
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { value: emptyObject(), bodyError: "not_object" };
  }
  return { value: parsed as Record<string, unknown> };
}

/**
 * The query as trpc-to-openapi hands it to a GET procedure: a name given once
 * is a string, a name repeated is an array of its values.
 */
function queryInput(url: URL): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    query[name] = values.length === 1 ? values[0] : values;
  }
  return query;
}

export function createGateway(options: {
  router: ApiRouter;
  deps: AppDeps;
  extraRoutes: ExtraRoute[];
  trustProxy: TrustProxy;
  maxBodyBytes: number;
  /** Every answer carries Strict-Transport-Security (the public URL is https://). */
  strictTransportSecurity?: boolean;
  /** Called once per request after its access-log line (metrics). */
  onFinished: (request: FinishedRequest) => void;
  /**
   * Called once per request after it is answered, with its state and response
   * (the request log records it); must return at once and never throw.
   */
  onAnswered?: (state: RequestState, finished: FinishedRequest, response: Response) => void;
  /** False until the database has first been reached (and migrated). */
  databaseStarted: () => boolean;
  /** Turns for the read routes (Meta.readTurn); without it they run at once. */
  readTurns?: ReadTurns;
  /** HTML answers for failures under the pages' paths (/dashboard, /claim); everything else gets the envelope. */
  pageErrors?: PageErrors[];
  /** Holds for the conditional routes (Meta.conditional, `Prefer: wait`); without it they answer at once. */
  conditionalReads?: ConditionalReads;
}): Handler {
  const { deps } = options;
  const routes = routeTable(options.router, options.extraRoutes);

  /**
   * A REST route: its procedure, called with tRPC's server-side call, and its
   * answer as JSON with the status and headers the procedure chose (respond()).
   * Errors become the envelope in frameRequest.
   */
  async function callProcedure(
    request: Request,
    url: URL,
    route: ProcedureRoute,
    params: Record<string, string>,
    state: RequestState,
  ): Promise<Response> {
    const answer = await runProcedure(request, url, route, params, state);
    return new Response(answer.body, {
      status: answer.status,
      headers: { ...answer.headers, "Content-Type": "application/json" },
    });
  }

  /** callProcedure's work, before the answer is a Response (the conditional routes tag it first). */
  async function runProcedure(
    request: Request,
    url: URL,
    route: ProcedureRoute,
    params: Record<string, string>,
    state: RequestState,
  ): Promise<ProcedureAnswer> {
    const body = await prepareBody(request, route, options.maxBodyBytes);
    const input = route.takesInput
      ? { ...(route.takesBody ? body.value : queryInput(url)), ...params }
      : undefined;
    const context: Context = { deps, state };
    let data: unknown;
    try {
      data = await callTRPCProcedure({
        router: options.router,
        path: route.path,
        type: route.type,
        ctx: context,
        getRawInput: async () => input,
        signal: undefined,
        batchIndex: 0,
      });
    } catch (cause) {
      const error = getTRPCErrorFromUnknown(cause);
      if (isUnexpected(error)) state.log.error({ err: error }, "procedure failed");
      throw toApiError(error, route.meta, body.bodyError, body.bodyProblem);
    }
    if (body.bodyProblem) throw body.bodyProblem;
    const meta = successResponseMeta(state);
    return { status: meta.status, headers: meta.headers, body: JSON.stringify(data), data };
  }

  async function dispatch(
    request: Request,
    state: RequestState,
    routeInfo: { template: string },
  ): Promise<Response> {
    const url = new URL(request.url);
    const path = normalizePath(url.pathname);
    // HEAD is GET without the body: routed, and worded, as GET (its Content-Length is GET's).
    const method = request.method === "HEAD" ? "GET" : request.method;
    const matching = routes.filter((route) => route.pattern.test(path));
    if (matching.length === 0) {
      throw new ApiError(
        "route_not_found",
        `No route ${echoed(method)} ${echoed(url.pathname)}. See /docs for the API reference.`,
      );
    }
    const route = matching.find((candidate) => candidate.method === method);
    if (!route) {
      const allow = [...new Set(matching.map((candidate) => candidate.method))];
      if (allow.includes("GET")) allow.push("HEAD");
      throw new ApiError(
        "method_not_allowed",
        `${echoed(method)} is not allowed here. Allowed: ${allow.join(", ")}.`,
        {
          Allow: allow.join(", "),
        },
      );
    }
    routeInfo.template = route.template;
    refuseRepeatedHeaders(request.headers);
    if (route.needsDatabase && !options.databaseStarted()) {
      throw databaseUnavailableError();
    }
    const params = route.pattern.exec(path)?.groups ?? {};
    if (route.extra) return route.extra.handle(request, state, params);
    const turns = options.readTurns;
    const conditional = route.procedure.meta.conditional;
    if (conditional) {
      const procedure = route.procedure;
      const read = () => runProcedure(request, url, procedure, params, state);
      return answerConditionally({
        state,
        id: params[conditional.idParam] ?? "",
        // Each read takes its own turn: a hold keeps none while it waits.
        read: turns && procedure.meta.readTurn === true ? () => inTurn(turns, read) : read,
        reads: options.conditionalReads,
      });
    }
    if (turns && route.procedure.meta.readTurn === true) {
      return inTurn(turns, () => callProcedure(request, url, route.procedure, params, state));
    }
    return callProcedure(request, url, route.procedure, params, state);
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
    const { response, finished, state } = await frameRequest(
      deps.logger,
      request,
      clientAddress,
      (state, route) => dispatch(request, state, route),
      {
        errorPage,
        strictTransportSecurity: options.strictTransportSecurity === true,
        ...(connection?.hostMissing ? { refusal: hostMissingError() } : {}),
      },
    );
    options.onFinished(finished);
    options.onAnswered?.(state, finished, response);
    return response;
  };
}

/**
 * HEAD's answer: GET's status and headers without the body, and the length
 * GET's body would have had (RFC 9110 §8.6: that length or none, never
 * another; the runtime would otherwise announce 0).
 */
async function headResponse(response: Response): Promise<Response> {
  const length =
    response.headers.get("content-length") ??
    (response.body ? String((await response.arrayBuffer()).byteLength) : "0");
  const headers = new Headers(response.headers);
  headers.set("Content-Length", length);
  return new Response(null, { status: response.status, headers });
}

/**
 * A read route's procedure, once it has its turn (Meta.readTurn): at most the pool's size of them run at
 * once, the rest wait in arrival order holding only the request. Every request that runs has allocated its
 * whole call (tRPC's middleware frames, the validated input, the statement's parameters) before it asks the
 * pool for a connection, and under load it waits there that way: with 256 reads waiting on 20 connections,
 * each one's objects outlived a garbage collection or two, and the collector copied and promoted them all
 * (bench/log/2026-11-27.md#read-turns-2026-11-27). A read that waits longer than the database's connect deadline answers as
 * one the pool could not serve: 500 with Retry-After.
 */
async function inTurn<T>(turns: ReadTurns, call: () => Promise<T>): Promise<T> {
  try {
    return await turns.slots.run(call, { timeoutMs: turns.timeoutMs });
  } catch (error) {
    if (error instanceof SlotWaitTimeout) throw databaseUnavailableError();
    throw error;
  }
}

/** The status logged for a request whose client closed the connection mid-body (nginx's 499). */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * One request's frame, on either listener: its id and state, the envelope for
 * any failure (or `errorPage`'s HTML, with the error's headers), `X-Request-Id`,
 * no body for HEAD, and its one access-log line (`fields`: the listener's own,
 * first).
 *
 * Kept short on purpose: an async function's frame (every local it has, for
 * the whole request) is allocated per call and outlives a garbage collection
 * whenever the request waits, so the rare paths (a failure, the log line) are
 * functions of their own (bench/log/2026-11-27.md#what-survives-a-scavenge-2026-11-27-night).
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
    /** Set Strict-Transport-Security on every answer. */
    strictTransportSecurity?: boolean;
    /** Answer with this error without dispatching (what the server found wrong with the request itself). */
    refusal?: ApiError;
  } = {},
): Promise<{ response: Response; finished: FinishedRequest; state: RequestState }> {
  const startedAt = performance.now();
  // The request's own logger is made when something logs for it: most
  // requests write only their access line, which names the id itself.
  const state = newRequestState(newId("req"), request, clientAddress, logger);
  const route = { template: "unmatched" };
  let response: Response;
  let failure: Failure | undefined;
  try {
    if (options.refusal) throw options.refusal;
    response = await dispatch(state, route);
  } catch (error) {
    failure = failureOf(error, state);
    response = await failureResponse(failure.error, state, options.errorPage);
  }
  response.headers.set("X-Request-Id", state.requestId);
  // No response is ever to be content-sniffed (JSON read as HTML, …): issue 25, L7.
  response.headers.set("X-Content-Type-Options", "nosniff");
  // Served over https (behind a TLS-terminating proxy): browsers keep to https for two years (issue 53, item 7).
  if (options.strictTransportSecurity) response.headers.set("Strict-Transport-Security", HSTS);
  if (request.method === "HEAD") response = await headResponse(response);
  const finished = logAccess(logger, state, route.template, response, failure, startedAt, options.fields);
  return { response, finished, state };
}

/** Two years, the HSTS preload list's own minimum being one; no includeSubDomains: other hosts are not ours to pin. */
export const HSTS = "max-age=63072000";

/** Why a request failed: the error it is answered with, and whether the client had gone (499). */
type Failure = { error: ApiError; clientClosed: boolean };

/** The error a request that threw is answered with; anything unexpected is logged. */
function failureOf(thrown: unknown, state: RequestState): Failure {
  /** The client went away mid-body: logged (and counted) as 499, nobody reads the answer. */
  const clientClosed = thrown instanceof ClientClosedRequest;
  if (!(thrown instanceof ApiError) && !clientClosed) state.log.error({ err: thrown }, "request failed");
  const error =
    thrown instanceof ApiError
      ? thrown
      : clientClosed
        ? new ApiError("invalid_request", (thrown as Error).message)
        : toApiError(thrown, undefined);
  return { error, clientClosed };
}

/** The envelope for `error`, or the error page's HTML with the error's headers where there is one. */
async function failureResponse(
  error: ApiError,
  state: RequestState,
  errorPage: ((request: Request, error: ApiError, requestId: string) => Promise<Response | null>) | undefined,
): Promise<Response> {
  const envelope = errorResponse(error, state.requestId);
  if (!errorPage) return envelope;
  try {
    const page = await errorPage(state.request, error, state.requestId);
    if (!page) return envelope;
    for (const [name, value] of Object.entries(error.headers)) page.headers.set(name, value);
    return page;
  } catch (pageError) {
    state.log.error({ err: pageError }, "error page failed; answering with the envelope");
    return envelope;
  }
}

/** Writes the request's access-log line; returns what the metrics and the request log are told. */
function logAccess(
  logger: AppLogger,
  state: RequestState,
  template: string,
  response: Response,
  failure: Failure | undefined,
  startedAt: number,
  fields: Readonly<Record<string, string>> | undefined,
): FinishedRequest {
  const clientClosed = failure?.clientClosed === true;
  const status = clientClosed ? CLIENT_CLOSED_REQUEST : response.status;
  const durationMs = performance.now() - startedAt;
  const method = state.request.method;
  logger[status >= 500 && !clientClosed ? "error" : "info"](
    {
      request_id: state.requestId,
      ...fields,
      method,
      route: template,
      status,
      duration_ms: Math.round(durationMs * 10) / 10,
      ...(state.projectId ? { project_id: state.projectId } : {}),
      ...(state.held ? { held: true } : {}),
    },
    "request",
  );
  return {
    route: template,
    method,
    status,
    seconds: durationMs / 1000,
    code: failure?.error.code,
    held: state.held === true,
  };
}
