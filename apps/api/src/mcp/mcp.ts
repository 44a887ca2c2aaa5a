// POST /mcp on the public port: the Model Context Protocol's Streamable HTTP
// transport, stateless, from the official SDK (@modelcontextprotocol/sdk's
// web-standard transport: a fetch Request in, a Response out, as Deno serves
// it). Each POST gets its own server and transport, answered with JSON (no
// stream, no session): nothing is kept between requests, so any instance can
// answer any request.
//
// The gateway frames it like every route: the request id (X-Request-Id, and
// request_id in every tool error), the body read within the public port's
// limit and deadline (read-body.ts), the access-log line; the HTTP server's
// connection bounds apply as to any request. GET /mcp (the optional
// server-to-client stream) is not offered: the gateway answers 405.
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
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { Timer } from "@sms/domain";
import { getTRPCErrorFromUnknown, TRPCError } from "@trpc/server";
import { z } from "zod";
import { ApiError } from "../contract/errors.ts";
import type { AppDeps } from "../deps.ts";
import { API_VERSION } from "../docs/openapi.ts";
import type { OriginRule } from "./origin.ts";
import { isUnexpected, toApiError } from "../http/errors.ts";
import type { ExtraRoute } from "../http/gateway.ts";
import { readBody } from "../http/read-body.ts";
import { type RequestState, successResponseMeta } from "../trpc/request-state.ts";
import { createCaller } from "./caller.ts";
import { TOOLS, type Tool, type ToolCall, type ToolContext } from "./tools.ts";

const INSTRUCTIONS =
  "Send verification, sign-in and password-reset codes by SMS to Georgian mobile numbers. " +
  "No key yet? Call create_test_key, configure its api_key as this server's Authorization header (Bearer), " +
  "and give its claim_url to a human. Then send_message (a new UUID as idempotency_key per message, reused on retry) " +
  "and wait_for_message for the outcome. list_templates shows the templates and the test numbers that simulate failures.";

/** The tools as tools/list describes them: each zod schema as JSON Schema (made once, on first use). */
let described: ReturnType<typeof describeTools> | undefined;
function describeTools() {
  return TOOLS.map((tool) => {
    const { $schema: _ignored, ...inputSchema } = z.toJSONSchema(tool.input, { io: "input" });
    return {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputSchema as { type: "object"; [key: string]: unknown },
      annotations: { title: tool.title, readOnlyHint: tool.readOnly, openWorldHint: !tool.readOnly },
    };
  });
}

/**
 * The request a procedure sees for one tool call: the MCP request's
 * Authorization (the only place the API key travels) and the tool's own
 * headers (send_message's idempotency_key), as the bytes HTTP would carry
 * (read back with headerText, like any header).
 */
function toolRequest(mcpRequest: Request, extra: Record<string, string>): Request {
  const headers = new Headers();
  const authorization = mcpRequest.headers.get("authorization");
  if (authorization !== null) headers.set("Authorization", authorization);
  for (const [name, value] of Object.entries(extra)) {
    const bytes = new TextEncoder().encode(value);
    try {
      headers.set(name, String.fromCharCode(...bytes));
    } catch {
      throw new ApiError(
        "invalid_request",
        `${name} must be text without line breaks or control characters.`,
      );
    }
  }
  return new Request(mcpRequest.url, { method: "POST", headers });
}

/** A call on the procedures for one tool, with the MCP request's id, address and log. */
function toolCall(deps: AppDeps, state: RequestState, extra: Record<string, string>): ToolCall {
  const request = toolRequest(state.request, extra);
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
  };
  return { api: createCaller({ deps, state: toolState }), answer: () => successResponseMeta(toolState) };
}

function text(value: unknown): { type: "text"; text: string } {
  return { type: "text", text: typeof value === "string" ? value : JSON.stringify(value) };
}

/** A tool error: the API's envelope, as text and as structured content. */
function toolError(error: ApiError, requestId: string): CallToolResult {
  const envelope = { error: { code: error.code, message: error.message, request_id: requestId } };
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

function mcpServer(deps: AppDeps, state: RequestState, timer: Timer): Server {
  const server = new Server(
    { name: "sms-api", title: "Georgia SMS API", version: API_VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => {
    described ??= describeTools();
    return { tools: described };
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
      call: (headers = {}) => toolCall(deps, state, headers),
      timer,
      signal: extra.signal,
    };
    return callTool(tool, request.params.arguments ?? {}, context, state);
  });
  return server;
}

export function mcpRoutes(options: {
  deps: AppDeps;
  maxBodyBytes: number;
  timer: Timer;
  /** Refuses a browser's foreign Origin and a foreign Host (origin.ts). */
  origin: OriginRule;
}): ExtraRoute[] {
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
        const server = mcpServer(options.deps, state, options.timer);
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        await server.connect(transport);
        try {
          return await transport.handleRequest(request, { parsedBody });
        } finally {
          await server.close();
        }
      },
    },
  ];
}
