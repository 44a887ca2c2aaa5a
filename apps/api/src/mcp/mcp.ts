// POST /mcp on the public port: the Model Context Protocol's Streamable HTTP
// transport from the official SDK (@modelcontextprotocol/sdk's web-standard
// transport: a fetch Request in, a Response out, as Deno serves it). Each POST
// gets its own server and transport, answered with JSON (no stream): nothing
// is kept in the process between requests, so any instance can answer any
// request.
//
// Sessions (session-key.ts): an initialize answer carries a new random
// Mcp-Session-Id, which the client sends on every later request. It names
// nothing until create_test_key binds its new key to it; the binding lives in
// the database (the id's SHA-256 hash and the key's id), so it serves the
// session's calls without Authorization on any instance. DELETE /mcp ends it.
//
// The gateway frames it like every route: the request id (X-Request-Id, and
// request_id in every tool error), the body read within the public port's
// limit and deadline (read-body.ts), the access-log line; the HTTP server's
// connection bounds apply as to any request. GET /mcp (the optional
// server-to-client stream) is not offered: the gateway answers 405.
//
// Besides the tools (tools.ts), resources/list and resources/read serve the
// guide, the template catalogue and the simulator numbers (resources.ts).
//
// Why the SDK's `Server` and not its `McpServer`: McpServer validates a tool's
// arguments against its schema itself and answers a failure with its own
// sentence, while every error here carries the API's code, message and
// request_id, and the procedures are the one validator (a bad `to` is
// `invalid_recipient` with the REST wording). So tools/list advertises each
// tool's zod schema (as JSON Schema) and tools/call hands the arguments to the
// tool, whose procedure validates them.

import { Server } from "@modelcontextprotocol/sdk/server";
// The SDK's subpaths map "./*" to "./dist/esm/*" for code and "./dist/esm/*.d.ts"
// for types, so "….js" finds no types under Deno: point Deno at them.
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { API_ERROR_CODES } from "@sms/contract";
import { type Authentication, newMcpSessionId, type Timer } from "@sms/domain";
import { getTRPCErrorFromUnknown, TRPCError } from "@trpc/server";
import { z } from "zod";
import { ApiError } from "../contract/api-error.ts";
import type { AppDeps } from "../deps.ts";
import { API_VERSION } from "../docs/openapi.ts";
import { type ConditionalReads, watchChanges } from "../http/conditional-read.ts";
import { isUnexpected, toApiError } from "../http/errors.ts";
import type { ExtraRoute } from "../http/gateway.ts";
import { readBody } from "../http/read-body.ts";
import { type RequestState, successResponseMeta } from "../trpc/request-state.ts";
import { createCaller } from "./caller.ts";
import type { OriginRule } from "./origin.ts";
import { type McpResource, mcpResources } from "./resources.ts";
import { isInitialize, MCP_SESSION_HEADER, sessionIdOf, withSessionId } from "./session-key.ts";
import { TOOLS, type Tool, type ToolCall, type ToolContext } from "./tools.ts";
import { toolErrorMessage } from "./wording.ts";

const INSTRUCTIONS =
  "Send verification, sign-in and password-reset codes by SMS to Georgian mobile numbers. " +
  "No key yet? Call create_test_key: its key then serves the rest of this session (no configuration, never a tool " +
  "argument). Tell your human to open its claim_url, and to keep its api_key (shown once) as a secret for later " +
  "sessions. Then send_message (a new UUID as idempotency_key per message, reused on retry) and wait_for_message " +
  "for the outcome; or start_verification and check_verification (outcome approved: let the user in). " +
  "The resources hold the guide, the templates and the test numbers that simulate failures (also list_templates).";

/** A tool error's structured content: the API's envelope. */
const ZToolError = z.strictObject({
  error: z.strictObject({
    code: z.enum(API_ERROR_CODES),
    message: z.string(),
    request_id: z.string(),
  }),
});

type JsonObjectSchema = { type: "object"; [key: string]: unknown };

/** A zod schema as the JSON Schema tools/list carries (no $schema line). */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io });
  return rest;
}

/** The tools as tools/list describes them: each zod schema as JSON Schema (made once, on first use). */
let described: ReturnType<typeof describeTools> | undefined;
function describeTools() {
  return TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchema(tool.input, "input") as JsonObjectSchema,
    // The result, or (isError: true) the API's error envelope: the structured content is one of them.
    outputSchema: {
      type: "object",
      ...jsonSchema(z.union([tool.output, ZToolError]), "output"),
    } as JsonObjectSchema,
    annotations: { title: tool.title, readOnlyHint: tool.readOnly, openWorldHint: !tool.readOnly },
  }));
}

/**
 * The request a procedure sees for one tool call: the MCP request's
 * Authorization (the only place an API key travels in a request) and the
 * tool's idempotency_key as the Idempotency-Key header, as the bytes HTTP
 * would carry (read back with headerText, like any header).
 */
function toolRequest(mcpRequest: Request, idempotencyKey: unknown): Request {
  const headers = new Headers();
  const authorization = mcpRequest.headers.get("authorization");
  if (authorization !== null) headers.set("Authorization", authorization);
  if (typeof idempotencyKey === "string") {
    const bytes = new TextEncoder().encode(idempotencyKey);
    try {
      headers.set("Idempotency-Key", String.fromCharCode(...bytes));
    } catch {
      throw new ApiError(
        "invalid_request",
        "idempotency_key must be text without line breaks or control characters.",
      );
    }
  }
  return new Request(mcpRequest.url, { method: "POST", headers });
}

/**
 * A call on the procedures for one tool, with the MCP request's id, address
 * and log, and the session's key for a request without Authorization.
 */
function toolCall(
  deps: AppDeps,
  state: RequestState,
  sessionKey: (() => Promise<Authentication>) | undefined,
  idempotencyKey: unknown,
): ToolCall {
  const request = toolRequest(state.request, idempotencyKey);
  const toolState: RequestState = {
    requestId: state.requestId,
    request,
    clientAddress: state.clientAddress,
    get log() {
      return state.log;
    },
    // The project the key belongs to is named in the MCP request's access-log line.
    get projectId() {
      return state.projectId;
    },
    set projectId(id) {
      state.projectId = id;
    },
    // …and the key, so that the request log records the MCP request as made with it.
    get apiKey() {
      return state.apiKey;
    },
    set apiKey(key) {
      state.apiKey = key;
    },
  };
  return {
    api: createCaller({ deps, state: toolState, ...(sessionKey ? { sessionKey } : {}) }),
    answer: () => successResponseMeta(toolState),
  };
}

function text(value: unknown): { type: "text"; text: string } {
  return { type: "text", text: typeof value === "string" ? value : JSON.stringify(value) };
}

/** A tool error: the API's envelope (worded for tools), as text and as structured content. */
function toolError(error: ApiError, requestId: string): CallToolResult {
  const envelope = {
    error: { code: error.code, message: toolErrorMessage(error.message), request_id: requestId },
  };
  const retryAfter = error.headers["Retry-After"];
  return {
    isError: true,
    content: [text(envelope)],
    structuredContent: envelope,
    ...(retryAfter ? { _meta: { retry_after_seconds: Number(retryAfter) } } : {}),
  };
}

async function callTool(
  tool: Tool,
  args: Record<string, unknown>,
  context: ToolContext,
  state: RequestState,
) {
  try {
    const { result, notes = [] } = await tool.run(args, context);
    return { content: [...notes.map(text), text(result)], structuredContent: result };
  } catch (cause) {
    if (cause instanceof ApiError) return toolError(cause, state.requestId);
    // A tool's own arguments (a ZodError) fail like a procedure's input.
    const error =
      cause instanceof z.ZodError
        ? new TRPCError({ code: "BAD_REQUEST", cause })
        : getTRPCErrorFromUnknown(cause);
    if (isUnexpected(error)) state.log.error({ err: error, tool: tool.name }, "MCP tool failed");
    return toolError(toApiError(error, tool.meta), state.requestId);
  }
}

/** What one MCP request knows of its session: its id, and the session's key (looked up once, on first use). */
function requestSession(deps: AppDeps, state: RequestState, sessionId: string | null) {
  let resumed: Promise<Authentication> | undefined;
  const sessionKey =
    sessionId === null
      ? undefined
      : () => {
          resumed ??= deps.services.mcpSessions.resume({ sessionId });
          return resumed;
        };
  return {
    sessionKey,
    tool: {
      hasAuthorization: state.request.headers.get("authorization") !== null,
      async bindKey(apiKey: string) {
        if (sessionId === null) return null;
        const bound = await deps.services.mcpSessions.bind({ sessionId, apiKey });
        // The key serves the rest of this request too (the next lookup is fresh).
        resumed = undefined;
        return bound.ok ? { expiresAt: bound.expiresAt } : null;
      },
    },
  };
}

function mcpServer(
  deps: AppDeps,
  state: RequestState,
  timer: Timer,
  resources: readonly McpResource[],
  sessionId: string | null,
  reads: ConditionalReads | undefined,
): Server {
  const server = new Server(
    { name: "sms-api", title: "Georgia SMS API", version: API_VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );
  const session = requestSession(deps, state, sessionId);
  server.setRequestHandler(ListToolsRequestSchema, () => {
    described ??= describeTools();
    return { tools: described };
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: resources.map(({ text: _text, ...resource }) => resource),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const resource = resources.find((candidate) => candidate.uri === request.params.uri);
    if (!resource) {
      // -32002: the MCP specification's "resource not found".
      throw new McpError(-32002, `No resource ${request.params.uri}. resources/list names them.`);
    }
    return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text: resource.text() }] };
  });
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const tool = TOOLS.find((candidate) => candidate.name === request.params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `No tool ${request.params.name}. Tools: ${TOOLS.map((t) => t.name).join(", ")}.`,
      );
    }
    const context: ToolContext = {
      call: (options = {}) => toolCall(deps, state, session.sessionKey, options.idempotencyKey),
      timer,
      signal: extra.signal,
      session: session.tool,
      // Only where notifications arrive: on PGlite the schedule costs fewer reads than polling every second.
      ...(reads?.changes.listening()
        ? {
            holds: {
              watch: (id: string) => watchChanges(reads.changes, id),
              // The key is known once the first read has authenticated it.
              enter: () => reads.room.enter(state.apiKey?.id ?? ""),
            },
          }
        : {}),
    };
    return callTool(tool, request.params.arguments ?? {}, context, state);
  });
  return server;
}

export function mcpRoutes(options: {
  deps: AppDeps;
  /** PUBLIC_BASE_URL: the guide's examples name it. */
  publicBaseUrl: string;
  maxBodyBytes: number;
  timer: Timer;
  /** Refuses a browser's foreign Origin and a foreign Host (origin.ts). */
  origin: OriginRule;
  /** wait_for_message's holds (http/conditional-read.ts); without them it polls. */
  conditionalReads?: ConditionalReads;
}): ExtraRoute[] {
  const resources = mcpResources(options.publicBaseUrl);
  return [
    {
      method: "POST",
      path: "/mcp",
      async handle(request, state) {
        const refused = options.origin(request);
        if (refused) throw refused;
        const body = await readBody(request, options.maxBodyBytes);
        if (body instanceof ApiError) throw body;
        let parsedBody: unknown;
        try {
          parsedBody = JSON.parse(body);
        } catch {
          // Not JSON: the transport answers it as it answers any message that is not JSON-RPC.
          parsedBody = body;
        }
        // An initialize opens a new session; any other request names its own (or none).
        const newSessionId = isInitialize(parsedBody) ? newMcpSessionId() : null;
        const server = mcpServer(
          options.deps,
          state,
          options.timer,
          resources,
          newSessionId ?? sessionIdOf(request),
          options.conditionalReads,
        );
        // Stateless as the SDK sees it: the session is ours (session-key.ts), not the transport's.
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        await server.connect(transport);
        try {
          const response = await transport.handleRequest(request, { parsedBody });
          return newSessionId !== null && response.ok ? withSessionId(response, newSessionId) : response;
        } finally {
          await server.close();
        }
      },
    },
    {
      // The client ends its session (the specification's DELETE with Mcp-Session-Id): its key no longer serves it.
      method: "DELETE",
      path: "/mcp",
      async handle(request) {
        const refused = options.origin(request);
        if (refused) throw refused;
        const sessionId = sessionIdOf(request);
        if (sessionId === null) {
          throw new ApiError(
            "invalid_request",
            `DELETE /mcp ends a session: send its ${MCP_SESSION_HEADER} header.`,
          );
        }
        await options.deps.services.mcpSessions.end({ sessionId });
        return new Response(null, { status: 204 });
      },
    },
  ];
}
