// The contract test: every response the API's integration and end-to-end
// suites receive is checked against the OpenAPI document, as a generated
// client would rely on it. test/setup.ts records every answer that comes
// through the harness's in-process `request` or through `fetch` (the Deno
// server), and fails the test file whose answers break the document: an
// undeclared status, a body its schema refuses (ajv, JSON Schema 2020-12 with
// formats), an undeclared or malformed header.
import { RESPONSE_HEADERS } from "@sms/contract";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { buildOpenApiDocument } from "../../src/docs/openapi.ts";
import { appRouter } from "../../src/router.ts";

// ajv-formats is CommonJS: its default export is the function under Node's ESM.
const addFormats =
  (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

type Schema = Record<string, unknown>;
type Header = { required?: boolean; schema: Schema };
type ResponseObject = {
  headers?: Record<string, { $ref: string }>;
  content?: Record<string, { schema: Schema }>;
};
type Operation = { responses: Record<string, ResponseObject> };
export type OpenApiDocument = {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    headers: Record<string, Header>;
    responses: Record<string, ResponseObject>;
  };
};

/** A JSON Schema 2020-12 validator over the document's components (OpenAPI 3.1 schemas are JSON Schema). */
export function documentValidator(document: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ $id: "openapi.json", components: document.components }, "openapi.json");
  const cache = new Map<string, ReturnType<typeof ajv.compile>>();
  /** Problems of `value` against `schema` ({$ref} into the document, or an inline schema). */
  return (schema: Schema, value: unknown): string[] => {
    const key = JSON.stringify(schema);
    let validate = cache.get(key);
    if (!validate) {
      const resolved = JSON.parse(key.replaceAll('"#/components/', '"openapi.json#/components/')) as Schema;
      validate = ajv.compile(resolved);
      cache.set(key, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (error: ErrorObject) =>
        `${error.instancePath || "(body)"} ${error.message} ${JSON.stringify(error.params)}`,
    );
  };
}

/** The document's path template that matches `path` (`/v1/messages/{message_id}`), if any. */
export function matchPath(document: OpenApiDocument, path: string): string | undefined {
  const normalised = path.length > 1 ? path.replace(/\/+$/, "") : path;
  return Object.keys(document.paths).find((template) =>
    new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(normalised),
  );
}

export type RecordedResponse = {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  /** The body text; null for HEAD. */
  body: string | null;
};

const DOCUMENTED_HEADERS = Object.keys(RESPONSE_HEADERS);

/** What is wrong with one response against the document (empty when it conforms). */
export function responseProblems(
  document: OpenApiDocument,
  validate: ReturnType<typeof documentValidator>,
  response: RecordedResponse,
): string[] {
  const where = `${response.method} ${response.path} → ${response.status}`;
  const template = matchPath(document, response.path);
  let parsed: unknown;
  try {
    parsed = response.body ? JSON.parse(response.body) : undefined;
  } catch {
    parsed = undefined;
  }
  const errorCode = (parsed as { error?: { code?: unknown } } | undefined)?.error?.code;

  let declared: ResponseObject | undefined;
  if (!template) {
    // Not an API path: only the gateway's route_not_found concerns the document
    // (pages such as /docs and /claim/… are not part of it).
    if (response.status !== 404 || errorCode !== "route_not_found") return [];
    declared = document.components.responses.RouteNotFound;
  } else {
    const method = response.method === "HEAD" ? "get" : response.method.toLowerCase();
    const operation = document.paths[template]?.[method];
    if (!operation) {
      if (response.status !== 405) return [`${where}: a method the document does not list must answer 405`];
      declared = document.components.responses.MethodNotAllowed;
    } else {
      declared = operation.responses[String(response.status)];
      if (!declared) return [`${where}: status not declared for ${method.toUpperCase()} ${template}`];
    }
  }
  if (!declared) return [`${where}: no declared response`];

  const problems: string[] = [];
  const headers = Object.fromEntries(
    Object.entries(declared.headers ?? {}).map(([name, ref]) => [
      name,
      document.components.headers[ref.$ref.split("/").pop() as string] as Header,
    ]),
  );
  for (const [name, header] of Object.entries(headers)) {
    const value = response.headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`${where}: required header ${name} is missing`);
      continue;
    }
    const schema = header.schema;
    const typed = schema.type === "integer" ? (/^\d+$/.test(value) ? Number(value) : value) : value;
    for (const problem of validate(schema, typed)) problems.push(`${where}: header ${name}: ${problem}`);
  }
  for (const name of DOCUMENTED_HEADERS) {
    if (response.headers.has(name) && !(name in headers))
      problems.push(`${where}: header ${name} is sent but not declared`);
  }

  if (response.body === null) return problems;
  const media = declared.content?.["application/json"];
  if (!media) {
    if (response.body !== "") problems.push(`${where}: a body the document does not declare`);
    return problems;
  }
  if (!(response.headers.get("content-type") ?? "").startsWith("application/json"))
    problems.push(`${where}: content type ${response.headers.get("content-type")} is not JSON`);
  if (parsed === undefined) return [...problems, `${where}: the body is not JSON`];
  for (const problem of validate(media.schema, parsed)) problems.push(`${where}: body ${problem}`);
  return problems;
}

let contract: { document: OpenApiDocument; validate: ReturnType<typeof documentValidator> } | undefined;
const recorded: Array<Promise<string[]>> = [];
const api = new Set<string>();

/** The document as /openapi.json serves it (the base URL aside), built once per test file. */
export function contractDocument(): OpenApiDocument {
  contract ??= (() => {
    const document = buildOpenApiDocument(appRouter, "http://api.test") as unknown as OpenApiDocument;
    return { document, validate: documentValidator(document) };
  })();
  return contract.document;
}

/** Marks an origin as the API's (the harness calls it for every app and server it starts). */
export function registerApiOrigin(origin: string): void {
  api.add(origin);
}

/** Records one answer of the API; its problems are reported when the file ends. */
export function recordResponse(request: Request, response: Response): void {
  const url = new URL(request.url);
  if (!api.has(url.origin)) return;
  const document = contractDocument();
  const validate = (contract as NonNullable<typeof contract>).validate;
  const method = request.method.toUpperCase();
  const isJson = (response.headers.get("content-type") ?? "").startsWith("application/json");
  const read =
    method === "HEAD" || !isJson ? Promise.resolve(method === "HEAD" ? null : "") : response.clone().text();
  recorded.push(
    read
      .then((body) =>
        responseProblems(document, validate, {
          method,
          path: url.pathname,
          status: response.status,
          headers: response.headers,
          body,
        }),
      )
      .catch((error: Error) => [`${method} ${url.pathname}: could not read the body: ${error.message}`]),
  );
}

/** Every problem recorded so far, and how many responses were checked. */
export async function contractProblems(): Promise<{ checked: number; problems: string[] }> {
  const results = await Promise.all(recorded);
  return { checked: results.length, problems: results.flat() };
}

/** Wraps the global fetch so that answers from the API's origins are recorded. */
export function recordFetches(): void {
  const original = globalThis.fetch;
  if ((original as { recorded?: boolean }).recorded) return;
  const wrapped = async (input: RequestInfo | URL, init?: RequestInit) => {
    const response = await original(input, init);
    const url = input instanceof Request ? input.url : String(input);
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    recordResponse(new Request(url, { method }), response);
    return response;
  };
  globalThis.fetch = Object.assign(wrapped, { recorded: true }) as typeof fetch;
}
