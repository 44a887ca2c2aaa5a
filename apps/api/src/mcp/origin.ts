// Who may call /mcp (issue 53, N1). The MCP specification requires a
// Streamable HTTP server to validate `Origin`: a page on another site (a DNS
// rebinding page that resolves its own name to the service's address) must
// not drive the tools from a visitor's browser. A request is refused with
// `403 origin_not_allowed` when
//
// - it carries an `Origin` that is neither the public origin
//   (PUBLIC_BASE_URL's) nor one of MCP_ALLOWED_ORIGINS; or
// - its `Host` is neither the public host nor a loopback name (a rebinding
//   page's requests carry its own name as the Host).
//
// Agents and servers send no `Origin` and the service's own host: they are
// never affected.
import { ApiError } from "../contract/api-error.ts";

const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;

export type OriginRule = (request: Request) => ApiError | null;

/** The rule for a service at `publicBaseUrl`, accepting `allowedOrigins` besides its own. */
export function mcpOriginRule(publicBaseUrl: string, allowedOrigins: readonly string[]): OriginRule {
  const publicUrl = new URL(publicBaseUrl);
  const origins = new Set([publicUrl.origin, ...allowedOrigins.map((origin) => new URL(origin).origin)]);
  const publicHost = publicUrl.host.toLowerCase();
  return (request) => {
    const origin = request.headers.get("origin");
    if (origin !== null && !origins.has(origin)) {
      return new ApiError(
        "origin_not_allowed",
        "This origin may not call /mcp. Call it from your agent or server, not from a web page.",
      );
    }
    const host = (request.headers.get("host") ?? new URL(request.url).host).toLowerCase();
    if (host !== publicHost && !LOOPBACK_HOST.test(host)) {
      return new ApiError(
        "origin_not_allowed",
        "This host name is not the service's: /mcp answers only under its public host.",
      );
    }
    return null;
  };
}
