// What a route declares beside its procedure (trpc-to-openapi's `meta`):
// the codes its input failures map to, its documented responses, and whether
// it answers without the database. The gateway and the OpenAPI document read
// it. A leaf: imports nothing of the app.
import type { OpenApiMeta } from "trpc-to-openapi";
import type { ZodType } from "zod";
import type { ApiErrorCode } from "./errors.ts";
import type { ResponseHeaderName } from "./headers.ts";

export type Meta = OpenApiMeta<{
  /**
   * Which stable code an input-validation failure of a top-level field maps
   * to, in precedence order; anything else is `invalid_request`.
   */
  inputErrors?: Array<[field: string, code: ApiErrorCode]>;
  /**
   * The route's own responses, for the OpenAPI document (docs/openapi.ts adds
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
  /**
   * The route is one short read by id (a message, a verification): its requests take turns, at most the
   * database pool's size at once, before their procedure starts, and wait for one holding only the request
   * (http/gateway.ts, inTurn). Never for a route that waits on anything but its own statement.
   */
  readTurn?: boolean;
  /**
   * The route is a conditional read (http/conditional-read.ts): its 200 carries an ETag, If-None-Match
   * answers 304, and `Prefer: wait` holds the request until the resource named by the path parameter
   * `idParam` changes.
   */
  conditional?: { idParam: string };
}>;

/** One status of a route, as the OpenAPI document describes it. */
export type DocumentedResponse = {
  description: string;
  /** Error statuses: the codes the route answers with at this status. */
  codes?: readonly ApiErrorCode[];
  /** Response headers beyond X-Request-Id (contract/headers.ts). */
  headers?: readonly ResponseHeaderName[];
  /** The answer has no body (304). */
  noBody?: boolean;
  /** Named examples of the body: real shapes, checked against the schema by test/openapi.test.ts. */
  examples?: Readonly<Record<string, { summary: string; value: unknown }>>;
};
