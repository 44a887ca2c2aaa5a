// The MCP suites' client: the official SDK's Client over its Streamable HTTP
// client transport, against the real server (e2e) or the in-process handler
// (integration), with or without an API key in the Authorization header.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";

export type McpSession = {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** The Mcp-Session-Id the server handed out at initialize. */
  sessionId: string | undefined;
  /** Calls a tool; the result as the SDK returns it. */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Every response's X-Request-Id, in order (requests through `fetch` only). */
  requestIds: string[];
  close(): Promise<void>;
};

export async function connectMcp(options: {
  baseUrl: string;
  apiKey?: string;
  fetch?: (input: Request) => Promise<Response>;
}): Promise<McpSession> {
  const requestIds: string[] = [];
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const transport = new StreamableHTTPClientTransport(new URL(`${options.baseUrl}/mcp`), {
    requestInit: options.apiKey ? { headers: { Authorization: `Bearer ${options.apiKey}` } } : {},
    fetch: async (input, init) => {
      const response = await send(new Request(input, init));
      const id = response.headers.get("x-request-id");
      if (id) requestIds.push(id);
      return response;
    },
  });
  const client = new Client({ name: "sms-api-tests", version: "0.0.0" });
  await client.connect(transport);
  return {
    client,
    transport,
    get sessionId() {
      return transport.sessionId;
    },
    requestIds,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
}

/** A successful tool result's structured content. */
export function resultOf<T = Record<string, unknown>>(result: CallToolResult): T {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  return result.structuredContent as T;
}

export type ToolErrorJson = { error: { code: string; message: string; request_id: string } };

/** A tool error's envelope: the same in the structured content and the text. */
export function errorOf(result: CallToolResult): ToolErrorJson["error"] {
  expect(result.isError, JSON.stringify(result.content)).toBe(true);
  const envelope = result.structuredContent as ToolErrorJson;
  const text = result.content.find((item) => item.type === "text");
  expect(text && JSON.parse((text as { text: string }).text)).toEqual(envelope);
  expect(Object.keys(envelope.error).sort()).toEqual(["code", "message", "request_id"]);
  expect(envelope.error.request_id).toMatch(/^req_/);
  return envelope.error;
}

/** Everything a result says, as one text (for privacy scans). */
export function resultText(result: CallToolResult): string {
  return JSON.stringify(result);
}
