// The MCP session at the edge (docs/agents.md#a-key-for-the-session): the
// session id an initialize answer hands out (Mcp-Session-Id) and that every
// later request of the session carries. The SDK's transport runs stateless
// (mcp.ts): the session is only this id, and the key create_test_key bound to
// it is in the database (the domain's mcp-session-keys.ts), so any instance
// serves any request of the session. A request with an id the service never
// made simply has no key of its own.
// Deno finds the SDK's types only when pointed at them (as in mcp.ts).
// @ts-types="@modelcontextprotocol/sdk/types"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

export const MCP_SESSION_HEADER = "Mcp-Session-Id";

/** True when the JSON-RPC body is (or, in a batch, holds) an initialize request. */
export function isInitialize(body: unknown): boolean {
  return Array.isArray(body)
    ? body.some((message) => isInitializeRequest(message))
    : isInitializeRequest(body);
}

/** The request's session id, or null without one. */
export function sessionIdOf(request: Request): string | null {
  const id = request.headers.get(MCP_SESSION_HEADER);
  return id === null || id === "" ? null : id;
}

/** `response` with the new session's id. */
export function withSessionId(response: Response, sessionId: string): Response {
  const headers = new Headers(response.headers);
  headers.set(MCP_SESSION_HEADER, sessionId);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
