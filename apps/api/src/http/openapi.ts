// The machine-readable description (GET /openapi.json), generated once at
// start-up from the procedures, then completed with what trpc-to-openapi
// cannot express: 201s, the idempotent-replay 200, the error envelope for
// every error status, and the response headers.
import { ERROR_STATUS } from "./errors.ts";
import { generateOpenApiDocument, type OpenApiRouter, type OpenAPIObject } from "trpc-to-openapi";
import { z } from "zod";
import type { Meta } from "../trpc/trpc.ts";

export const API_VERSION = "0.1.0";

const ZErrorEnvelope = z
  .strictObject({
    error: z.strictObject({
      code: z.enum(Object.keys(ERROR_STATUS) as [string, ...string[]]).meta({
        description: "Stable machine-readable code; safe to branch on.",
      }),
      message: z.string().meta({ description: "Human-readable; says what to change. Wording may change." }),
      request_id: z.string().nullable().meta({ description: "Echo of the X-Request-Id response header." }),
    }),
  })
  .meta({ id: "Error" });

const HEADER_DESCRIPTIONS: Record<string, { description: string; schema: { type: string } }> = {
  "X-Request-Id": {
    description: "Identifier of this request; quote it when asking for help.",
    schema: { type: "string" },
  },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
  "RateLimit-Limit": { description: "Requests allowed in the current window.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current window.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the current window resets.", schema: { type: "integer" } },
  "Idempotent-Replayed": {
    description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key.",
    schema: { type: "string" },
  },
};

type Operation = {
  operationId?: string;
  responses: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
};

function headerRefs(names: string[]) {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

/** Builds the document; `procedureMeta` gives each route's statuses. */
export function buildOpenApiDocument(router: OpenApiRouter, baseUrl: string): OpenAPIObject {
  const document = generateOpenApiDocument(router, {
    title: "Georgia transactional SMS API",
    description:
      "Send template-based verification, sign-in and password-reset codes to Georgian mobile numbers (+9955XXXXXXXX), " +
      "in Georgian or English, and read each message's delivery state. Private beta.",
    version: API_VERSION,
    baseUrl,
    docsUrl: `${baseUrl}/docs`,
    securitySchemes: {
      ApiKey: {
        type: "http",
        scheme: "bearer",
        description: "`Authorization: Bearer sk_test_…` or `sk_live_…`. Treat keys as passwords.",
      },
    },
    defs: { Error: ZErrorEnvelope },
  });

  const metaByRoute = new Map<string, Meta>();
  for (const procedure of Object.values(router._def.procedures) as Array<{ _def: { meta?: Meta } }>) {
    const openapi = procedure._def.meta?.openapi;
    if (openapi)
      metaByRoute.set(`${openapi.method.toLowerCase()} ${openapi.path}`, procedure._def.meta as Meta);
  }

  document.components ??= {};
  const components = document.components;
  components.headers = { ...HEADER_DESCRIPTIONS } as never;

  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, Operation>)) {
      const meta = metaByRoute.get(`${method} ${path}`);
      const declared = meta?.responses ?? { 200: "OK" };
      const success = op.responses["200"]?.content as Record<string, unknown> | undefined;
      const responses: Record<string, Record<string, unknown>> = {};
      for (const [statusText, description] of Object.entries(declared)) {
        const status = Number(statusText);
        const isError = status >= 400 && !(path === "/readyz" && status === 503);
        const headers = ["X-Request-Id"];
        if (status === 429)
          headers.push("Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset");
        if (path === "/v1/messages" && method === "post" && status === 200)
          headers.push("Idempotent-Replayed");
        responses[statusText] = {
          description: description ?? "",
          headers: headerRefs(headers),
          ...(isError
            ? { content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } }
            : success
              ? { content: success }
              : {}),
        };
      }
      op.responses = responses;
      // Only routes marked `protect` need an API key.
      op.security = meta?.openapi?.protect ? [{ ApiKey: [] }] : [];
    }
  }
  // trpc-to-openapi's own error schemas are replaced by the envelope above.
  const schemas = components.schemas ?? {};
  for (const name of Object.keys(schemas)) if (name.startsWith("error.")) delete schemas[name];
  return document;
}
