// Procedure tiers, defined once. The REST routes (trpc-to-openapi) and the
// typed @trpc/client reach the same procedures.
import { initTRPC } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { ApiError, type ApiErrorCode, REFUSAL_MESSAGES } from "../http/errors.ts";
import type { AppDeps } from "../deps.ts";
import type { AppLogger } from "../logger.ts";

/** Per-request state, created by the gateway before any procedure runs. */
export type RequestState = {
  requestId: string;
  request: Request;
  /** The caller's address as the rate limits see it (after TRUST_PROXY). */
  clientAddress: string;
  log: AppLogger;
  /** Status and headers a procedure wants on its success response. */
  response: { status?: number; headers: Record<string, string> };
  /** Set by the gateway when the body was not valid JSON. */
  bodyError?: "malformed_json" | "empty" | "not_object";
  /** Set by the gateway when the body was not read (415 wrong type, 413 too large). */
  bodyProblem?: ApiError;
  /** The error a procedure failed with (read by the gateway). */
  error?: unknown;
  projectId?: string;
};

export type Context = { deps: AppDeps; state: RequestState };

export type Meta = OpenApiMeta<{
  /**
   * Which stable code an input-validation failure of a top-level field maps
   * to, in precedence order; anything else is `invalid_request`.
   */
  inputErrors?: Array<[field: string, code: ApiErrorCode]>;
  /** Statuses this route can answer with, for the OpenAPI document. */
  responses?: Partial<Record<number, string>>;
}>;

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    isDev: false,
    // Used by the /trpc endpoint (the REST routes render the envelope in the
    // gateway): our stable code and the request id ride in `data`; an
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
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure;

/**
 * Spec 5: a Bearer API key. Narrows ctx with the project, the key's mode
 * (test or live) and the key id.
 */
export const apiKeyProcedure = t.procedure.use(async ({ ctx, next }) => {
  const result = await ctx.deps.auth.authenticate(ctx.state.request.headers.get("authorization"));
  if (!result.ok) {
    const headers: Record<string, string> =
      result.code === "project_suspended" ? {} : { "WWW-Authenticate": "Bearer" };
    throw new ApiError(result.code, REFUSAL_MESSAGES[result.code], headers);
  }
  ctx.state.projectId = result.project.id;
  return next({ ctx: { ...ctx, project: result.project, mode: result.mode, keyId: result.keyId } });
});
