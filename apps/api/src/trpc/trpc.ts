// Procedure tiers, defined once. The REST routes (trpc-to-openapi) and the
// typed @trpc/client on the internal listener reach the same procedures.
import type { Meta } from "@sms/contract";
import type { Authentication, DashboardViewer } from "@sms/domain";
import { initTRPC, type TRPCBuiltRouter, TRPCError } from "@trpc/server";
import { ApiError } from "../contract/api-error.ts";
import { retryHeaders } from "../contract/rate-limit-headers.ts";
import type { Register } from "../contract/refusals.ts";
import { REFUSAL_MESSAGES } from "../contract/wording.ts";
import type { AppDeps } from "../deps.ts";
import type { RequestState } from "./request-state.ts";

export type { DocumentedResponse, Meta } from "@sms/contract";

/**
 * What every procedure gets: the dependencies and this request's state
 * (trpc/request-state.ts); the dashboard's procedures also the signed-in
 * viewer, resolved from the session by the caller (the pages).
 */
export type Context = {
  deps: AppDeps;
  state: RequestState;
  viewer?: DashboardViewer;
  /**
   * An operator acting through an internal tool (the operator's command-line
   * tool): the internal listener's token holder, who names the operator for
   * the audit row (http/internal.ts, X-Operator). Never set on the public port.
   */
  toolOperator?: { actor: string };
  /** Who reads the refusals' sentences (contract/refusals.ts): the dashboard's browser unless said. */
  register?: Register;
  /**
   * An MCP session's own key (mcp/session-key.ts): what authenticates a call
   * that carries no Authorization header. A header, when there is one, wins.
   */
  sessionKey?: () => Promise<Authentication>;
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
export const mergeRouters = t.mergeRouters;
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

/**
 * The operator's procedures: a signed-in dashboard identity listed in
 * OPERATOR_IDENTITIES, or an internal tool naming its operator. Narrows ctx
 * with `actor`, the name the audit rows carry, and `register`.
 */
export const operatorProcedure = t.procedure.use(({ ctx, next }) => {
  const register = ctx.register ?? "browser";
  if (ctx.toolOperator) return next({ ctx: { actor: ctx.toolOperator.actor, register } });
  if (!ctx.viewer) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in to the dashboard." });
  if (!ctx.viewer.operator) throw new TRPCError({ code: "FORBIDDEN", message: "Operators only." });
  return next({ ctx: { actor: ctx.viewer.actor, register } });
});

/**
 * Spec 5: the request's Bearer API key, as the project, the key's mode (test
 * or live) and the key id; or the refusal.
 */
async function authenticateKey(ctx: Context) {
  const authorization = ctx.state.request.headers.get("authorization");
  if (authorization === null && ctx.sessionKey) return authenticated(ctx, await ctx.sessionKey());
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
  // The throttle hashed the key already: the lookup reuses that hash.
  const result = await ctx.deps.auth.authenticate(authorization, verdict.key ?? undefined);
  ctx.deps.authThrottle.after(address, verdict, result);
  return authenticated(ctx, result);
}

/** The project, mode and key id of a successful authentication, or its refusal. */
function authenticated(ctx: Context, result: Authentication) {
  if (!result.ok) {
    const headers: Record<string, string> =
      result.code === "project_suspended" ? {} : { "WWW-Authenticate": "Bearer" };
    throw new ApiError(result.code, REFUSAL_MESSAGES[result.code], headers);
  }
  ctx.state.projectId = result.project.id;
  ctx.state.apiKey = { id: result.keyId, mode: result.mode };
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
