// The machine-readable description (GET /openapi.json), built once at
// start-up with zod-openapi from the routes' own zod schemas and meta
// (routers/*/x.types.ts) and the error table (errors.ts): one schema per
// template for the request body, named components for every body, every
// status a route can answer with and the codes each status carries, and the
// response headers. The guide pages of /docs ride in its descriptions
// (guide.ts). test/openapi*.test.ts and the contract test hold it to the
// service's real answers.
import {
  API_ERROR_CODES,
  type ApiErrorCode,
  type DocumentedResponse,
  type Meta,
  RESPONSE_HEADERS,
  type ResponseHeaderName,
} from "@sms/contract";
import {
  forEachOpenApiProcedure,
  getInputOutputParsers,
  instanceofZodTypeLikeVoid,
  type OpenAPIObject,
  type OpenApiRouter,
} from "trpc-to-openapi";
import { z } from "zod";
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from "zod-openapi";
import { ERROR_GUIDE } from "../contract/wording.ts";
import { codeSamples } from "./code-samples.ts";
import { guidePages, referenceIntro, TAGS } from "./guide.ts";

export const API_VERSION = "0.1.0";

const ZErrorBody = (codes: readonly ApiErrorCode[]) =>
  z.strictObject({
    code: z.enum(codes as [ApiErrorCode, ...ApiErrorCode[]]).meta({
      description: "Stable machine-readable code; safe to branch on.",
    }),
    message: z.string().meta({ description: "Human-readable; says what to change. Wording may change." }),
    request_id: z.string().nullable().meta({
      description: "Echo of the `X-Request-Id` response header.",
      example: RESPONSE_HEADERS["X-Request-Id"].example,
    }),
  });

/** The error envelope with `code` limited to `codes`, registered as component `id`. */
function errorSchema(id: string, codes: readonly ApiErrorCode[], description: string) {
  return z.strictObject({ error: ZErrorBody(codes) }).meta({ id, description });
}

const ZError = errorSchema(
  "Error",
  API_ERROR_CODES,
  "The error envelope (spec 2.4), with every code the API uses.",
);

const codeList = (codes: readonly ApiErrorCode[]) =>
  codes.map((code) => `- \`${code}\`: ${ERROR_GUIDE[code].when} ${ERROR_GUIDE[code].action}`).join("\n");

function errorExamples(codes: readonly ApiErrorCode[]) {
  return Object.fromEntries(
    codes.map((code) => [
      code,
      {
        summary: code,
        value: {
          error: {
            code,
            message: ERROR_GUIDE[code].example,
            request_id: RESPONSE_HEADERS["X-Request-Id"].example,
          },
        },
      },
    ]),
  );
}

function headerRefs(names: readonly ResponseHeaderName[]) {
  return Object.fromEntries(
    ["X-Request-Id" as const, ...names].map((name) => [name, { $ref: `#/components/headers/${name}` }]),
  );
}

/** Headers every error status carries beyond X-Request-Id. */
function errorHeaders(status: number, codes: readonly ApiErrorCode[]): ResponseHeaderName[] {
  if (status === 401) return ["WWW-Authenticate"];
  if (status === 405) return ["Allow"];
  if (status === 429) return ["Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];
  // 500: a database outage answers with Retry-After; 503: the provider may too.
  if (status === 500 || codes.includes("provider_unavailable")) return ["Retry-After"];
  return [];
}

/** What every route answers with besides its own responses. */
function sharedResponses(meta: Meta): Record<number, DocumentedResponse> {
  const shared: Record<number, DocumentedResponse> = {};
  if (meta.openapi?.protect) {
    shared[401] = {
      description: "The API key is missing or invalid.",
      codes: ["unauthorized", "invalid_api_key"],
    };
    shared[403] = { description: "The key's project is suspended.", codes: ["project_suspended"] };
    shared[429] = {
      description: "Too many failed authentications from this address this minute (docs/auth-and-limits.md).",
      codes: ["rate_limited"],
    };
  }
  shared[404] = {
    description: "Nothing is served at this path (check the base URL).",
    codes: ["route_not_found"],
  };
  if (meta.openapi?.method === "POST") {
    shared[413] = { description: "The request body is too large.", codes: ["payload_too_large"] };
  }
  shared[500] = { description: "An unexpected error.", codes: ["internal_error"] };
  return shared;
}

function mergeResponses(own: Record<number, DocumentedResponse>, shared: Record<number, DocumentedResponse>) {
  const merged: Record<number, DocumentedResponse> = { ...shared };
  for (const [status, response] of Object.entries(own)) {
    const common = shared[Number(status)];
    merged[Number(status)] = common
      ? { ...response, codes: [...new Set([...(response.codes ?? []), ...(common.codes ?? [])])] }
      : response;
  }
  return merged;
}

const pascal = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Error component names: `Error401` where every route that answers 401 has the
 * same codes; otherwise a one-code set is named after its code
 * (`RouteNotFoundError`) and a larger one after its route (`SendMessageError400`).
 */
function errorSchemaNames(
  operations: Array<{ operationId: string; responses: Record<number, DocumentedResponse> }>,
) {
  const setsByStatus = new Map<number, Set<string>>();
  for (const { responses } of operations) {
    for (const [status, response] of Object.entries(responses)) {
      if (!response.codes) continue;
      const sets = setsByStatus.get(Number(status)) ?? new Set<string>();
      sets.add([...response.codes].sort().join(","));
      setsByStatus.set(Number(status), sets);
    }
  }
  return (operationId: string, status: number, codes: readonly ApiErrorCode[]) => {
    if ((setsByStatus.get(status)?.size ?? 0) <= 1) return `Error${status}`;
    if (codes.length === 1) return `${(codes[0] as string).split("_").map(pascal).join("")}Error`;
    return `${pascal(operationId)}Error${status}`;
  };
}

type Route = { meta: Meta; input: z.ZodType; output: z.ZodType | undefined };

function routesOf(router: OpenApiRouter): Route[] {
  const routes: Route[] = [];
  forEachOpenApiProcedure<Meta>(router._def.procedures, ({ procedure, meta }) => {
    const { inputParser, outputParser } = getInputOutputParsers(procedure);
    routes.push({
      meta,
      input: inputParser as unknown as z.ZodType,
      output: outputParser as unknown as z.ZodType | undefined,
    });
  });
  return routes;
}

/** Path parameters of `/v1/messages/{message_id}` come from the input object's matching fields. */
function pathParams(path: string, input: z.ZodType): z.ZodObject | undefined {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
  if (names.length === 0) return undefined;
  const shape = (input as unknown as z.ZodObject).shape;
  return z.object(Object.fromEntries(names.map((name) => [name, shape[name] as z.ZodType])));
}

export function buildOpenApiDocument(router: OpenApiRouter, baseUrl: string): OpenAPIObject {
  const routes = routesOf(router).map((route) => ({
    ...route,
    operationId: route.meta.openapi?.operationId ?? "",
    responses: mergeResponses(route.meta.responses ?? {}, sharedResponses(route.meta)),
  }));
  const errorName = errorSchemaNames(routes);
  const errorSchemas = new Map<string, z.ZodType>();
  const errorSchemaFor = (operationId: string, status: number, codes: readonly ApiErrorCode[]) => {
    const id = errorName(operationId, status, codes);
    const known = errorSchemas.get(id);
    if (known) return known;
    const schema = errorSchema(
      id,
      codes,
      `The error envelope of a ${status}: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
    );
    errorSchemas.set(id, schema);
    return schema;
  };

  const guides = guidePages(baseUrl);
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const openapi = route.meta.openapi;
    if (!openapi) continue;
    const responses: Record<string, ZodOpenApiResponseObject> = {};
    for (const [statusText, response] of Object.entries(route.responses)) {
      const status = Number(statusText);
      const codes = response.codes;
      const description = codes ? `${response.description}\n\n${codeList(codes)}` : response.description;
      const schema = response.noBody
        ? undefined
        : codes
          ? errorSchemaFor(route.operationId, status, codes)
          : route.output;
      const examples = codes ? errorExamples(codes) : response.examples;
      responses[statusText] = {
        description,
        headers: headerRefs([
          ...(response.headers ?? []),
          ...(codes ? errorHeaders(status, codes) : []),
        ]) as never,
        ...(schema ? { content: { "application/json": { schema, ...(examples ? { examples } : {}) } } } : {}),
      };
    }
    const takesBody = openapi.method !== "GET" && !instanceofZodTypeLikeVoid(route.input as never);
    const params = pathParams(openapi.path, route.input);
    const bodySchema = takesBody ? (route.meta.documentBody ?? route.input) : undefined;
    const samples = codeSamples(baseUrl, {
      method: openapi.method,
      path: openapi.path,
      protect: openapi.protect === true,
      idempotent: openapi.requestHeaders?.shape["Idempotency-Key"] !== undefined,
      ...(bodySchema ? { body: bodySchema.meta()?.example } : {}),
    });
    const operation: ZodOpenApiOperationObject = {
      "x-codeSamples": samples,
      operationId: route.operationId,
      summary: openapi.summary,
      description: openapi.description,
      tags: openapi.tags,
      security: openapi.protect ? [{ ApiKey: [] }] : [],
      ...(params || openapi.requestHeaders
        ? {
            requestParams: {
              ...(params ? { path: params } : {}),
              ...(openapi.requestHeaders ? { header: openapi.requestHeaders } : {}),
            },
          }
        : {}),
      ...(takesBody
        ? {
            requestBody: {
              required: true,
              content: { "application/json": { schema: route.meta.documentBody ?? route.input } },
            },
          }
        : {}),
      responses,
    };
    paths[openapi.path] = { ...paths[openapi.path], [openapi.method.toLowerCase()]: operation };
  }

  const document = createDocument({
    openapi: "3.1.0",
    info: {
      title: "Georgia transactional SMS API",
      version: API_VERSION,
      description: referenceIntro(),
    },
    servers: [{ url: baseUrl }],
    externalDocs: { description: "Interactive reference and guide", url: `${baseUrl}/docs` },
    tags: [...guides, ...TAGS.map((tag) => ({ ...tag }))],
    paths,
    components: {
      securitySchemes: {
        ApiKey: {
          type: "http",
          scheme: "bearer",
          description:
            "`Authorization: Bearer sk_test_…` or `sk_live_…`. Get a test key from `POST /v1/test-keys`. Treat keys as passwords.",
        },
      },
      schemas: { Error: ZError },
      headers: RESPONSE_HEADERS as never,
      responses: {
        // Answers to a path or method the API does not serve: no operation
        // owns them, so they are listed here (and in the guide).
        RouteNotFound: {
          description: `Nothing is served at this path.\n\n${codeList(["route_not_found"])}`,
          headers: headerRefs([]) as never,
          content: { "application/json": { schema: errorSchemaFor("", 404, ["route_not_found"]) } },
        },
        MethodNotAllowed: {
          description: `The path exists, the method does not.\n\n${codeList(["method_not_allowed"])}`,
          headers: headerRefs(["Allow"]) as never,
          content: {
            "application/json": {
              schema: errorSchemaFor("", 405, ["method_not_allowed"]),
            },
          },
        },
      },
    },
  }) as unknown as OpenAPIObject & Record<string, unknown>;
  document["x-tagGroups"] = [
    { name: "Guide", tags: guides.map((page) => page.name) },
    { name: "Reference", tags: TAGS.map((tag) => tag.name) },
  ];
  return document;
}

/**
 * The document as /openapi.json serves it: JSON, with each operation's
 * responses in reading order, the successes first and a `201` before its
 * `200` replay (an object's integer-like keys always come out in ascending
 * order from JSON.stringify, and Scalar shows the first response first).
 */
export function serializeDocument(document: OpenAPIObject): string {
  const rank = (status: string) => (status === "201" ? 0 : status.startsWith("2") ? 1 : 2);
  const write = (value: unknown, key: string | undefined): string => {
    if (Array.isArray(value)) return `[${value.map((item) => write(item, undefined)).join(",")}]`;
    if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
    let keys = Object.keys(value).filter((name) => (value as Record<string, unknown>)[name] !== undefined);
    // An operation's responses (status codes), not components.responses (names): a stable sort by rank.
    if (key === "responses" && keys.every((name) => /^\d{3}$/.test(name)))
      keys = [...keys].sort((a, b) => rank(a) - rank(b));
    return `{${keys
      .map((name) => `${JSON.stringify(name)}:${write((value as Record<string, unknown>)[name], name)}`)
      .join(",")}}`;
  };
  return write(JSON.parse(JSON.stringify(document)), undefined);
}
