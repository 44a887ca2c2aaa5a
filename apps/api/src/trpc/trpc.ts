// Procedure tiers, defined once. The REST routes (trpc-to-openapi) and the
// typed @trpc/client on the internal listener reach the same procedures.
import type { DashboardViewer } from "@sms/domain";
import { initTRPC, TRPCError, type TRPCBuiltRouter } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { ApiError, type ApiErrorCode, REFUSAL_MESSAGES } from "../http/errors.ts";
import type { AppDeps } from "../deps.ts";
import type { ResponseHeaderName } from "../http/openapi.ts";
import { retryHeaders } from "../http/rate-limit-headers.ts";
import type { RequestState } from "../http/request-state.ts";
import type { ZodType } from "zod";

/**
 * What every procedure gets: the dependencies and this request's state
 * (http/request-state.ts); the dashboard's procedures also the signed-in
 * viewer, resolved from the session by the caller (pages/dashboard).
 */
export type Context = { deps: AppDeps; state: RequestState; viewer?: DashboardViewer };

export type Meta = OpenApiMeta<{
  /**
   * Which stable code an input-validation failure of a top-level field maps
   * to, in precedence order; anything else is `invalid_request`.
   */
  inputErrors?: Array<[field: string, code: ApiErrorCode]>;
  /**
   * The route's own responses, for the OpenAPI document (http/openapi.ts adds
   * the ones every route shares: 401/403 on protected routes, 404
   * route_not_found, 413 on POST, 500).
   */
  responses?: Readonly<Record<number, DocumentedResponse>>;
  /**
   * The request body as the document states it, when the runtime schema is
   * deliberately looser (its failures map to the codes of `inputErrors`);
   * test/openapi-request.test.ts holds the two to the same verdicts.
   */
  documentBody?: ZodType;
  /**
   * The route answers without the database (health, documents). Every other
   * route answers 500 with Retry-After until the database has first been reached.
   */
  withoutDatabase?: boolean;
}>;

/** One status of a route, as the OpenAPI document describes it. */
export type DocumentedResponse = {
  description: string;
  /** Error statuses: the codes the route answers with at this status. */
  codes?: readonly ApiErrorCode[];
  /** Response headers beyond X-Request-Id (see RESPONSE_HEADERS in http/openapi.ts). */
  headers?: readonly ResponseHeaderName[];
  /** Named examples of the body: real shapes, checked against the schema by test/openapi.test.ts. */
  examples?: Readonly<Record<string, { summary: string; value: unknown }>>;
};

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    isDev: false,
    // Used by the internal listener's tRPC endpoint (the REST routes render
    // the envelope in the gateway): our stable code and the request id ride in `data`; an
    // unexpected error's message is replaced. Never throws.
    errorFormatter({ shape, error, ctx }) {
      const cause = error.cause;
      const known = cause instanceof ApiError ? cause : null;
      const validation = !known && error.code === "BAD_REQUEST";
      return {
        ...shape,
        message: known
          ? known.message
          : validation
            ? "The request is invalid."
            : "An unexpected error occurred.",
        data: {
          code: shape.data.code,
          httpStatus: known ? known.status : shape.data.httpStatus,
          apiCode: known ? known.code : validation ? "invalid_request" : "internal_error",
          requestId: ctx?.state.requestId ?? null,
        },
      };
    },
  });

export const router = t.router;
/** A router built from these tiers, whatever its procedures: what the gateway serves. */
export type ApiRouter = TRPCBuiltRouter<typeof t._config.$types, Record<never, never>>;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure;

/** The dashboard's procedures: a signed-in session (ctx.viewer). */
export const viewerProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.viewer) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in to the dashboard." });
  return next({ ctx: { ...ctx, viewer: ctx.viewer } });
});

/** The operator's procedures: a signed-in identity listed in OPERATOR_IDENTITIES. */
export const operatorProcedure = viewerProcedure.use(({ ctx, next }) => {
  if (!ctx.viewer.operator) throw new TRPCError({ code: "FORBIDDEN", message: "Operators only." });
  return next();
});

/**
 * Spec 5: the request's Bearer API key, as the project, the key's mode (test
 * or live) and the key id; or the refusal.
 */
async function authenticateKey(ctx: Context) {
  const authorization = ctx.state.request.headers.get("authorization");
  const address = ctx.state.clientAddress;
  const verdict = ctx.deps.authThrottle.before(address, authorization);
  if (verdict.kind === "throttled") {
    throw new ApiError(
      "rate_limited",
      REFUSAL_MESSAGES.authentication_rate_limited,
      retryHeaders(
        { limit: verdict.limit, remaining: 0, resetAt: verdict.resetAt, window: "minute" },
        ctx.deps.clock.now(),
      ),
    );
  }
  if (verdict.kind === "known_invalid") {
    throw new ApiError("invalid_api_key", REFUSAL_MESSAGES.invalid_api_key, { "WWW-Authenticate": "Bearer" });
  }
  const result = await ctx.deps.auth.authenticate(authorization);
  ctx.deps.authThrottle.after(address, verdict, result);
  if (!result.ok) {
    const headers: Record<string, string> =
      result.code === "project_suspended" ? {} : { "WWW-Authenticate": "Bearer" };
    throw new ApiError(result.code, REFUSAL_MESSAGES[result.code], headers);
  }
  ctx.state.projectId = result.project.id;
  return { project: result.project, mode: result.mode, keyId: result.keyId };
}

/**
 * An API key's procedures whose routes also check a header of their own right
 * after the key (spec 4.2: Idempotency-Key), before the body: `check` returns
 * what it adds to ctx, or throws the refusal. One middleware for both, since
 * every middleware level costs each call a copy of its options.
 */
export function apiKeyProcedureWith<Extra extends object>(check: (ctx: Context) => Extra) {
  return t.procedure.use(async ({ ctx, next }) => {
    const key = await authenticateKey(ctx);
    return next({ ctx: { ...key, ...check(ctx) } });
  });
}

/** Spec 5: a Bearer API key. Narrows ctx with the project, the key's mode and the key id. */
export const apiKeyProcedure = apiKeyProcedureWith(() => ({}));
