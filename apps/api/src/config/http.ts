// The public listener: where it listens, the address it is known by, what it
// accepts from a connection, which proxies it believes, and API keys at the edge.
import { z } from "zod";
import { parseTrustProxy, type TrustProxy } from "../http/client-address.ts";
import type { TServiceEnv } from "./service.ts";
import { bool, commaList, fail, int, optionalString, SECOND_MS } from "./shared.ts";

export const ZHttpEnv = z.object({
  PORT: int(3000, 0, 65535),
  /** Default: 127.0.0.1 outside production (the development sign-in is on there), 0.0.0.0 in production. */
  HOST: optionalString,
  PUBLIC_BASE_URL: z.url().optional(),
  /** Production accepts an http:// PUBLIC_BASE_URL for a public host only with this (TLS ends before the service). */
  ALLOW_HTTP_PUBLIC_BASE_URL: bool(false),
  /** Browser origins besides PUBLIC_BASE_URL's own that may call /mcp (comma-separated, e.g. https://agent.example). */
  MCP_ALLOWED_ORIGINS: optionalString,
  MAX_BODY_BYTES: int(16 * 1024, 256, 1024 * 1024),
  HTTP_HEADERS_TIMEOUT_SECONDS: int(10, 1, 3600),
  HTTP_BODY_TIMEOUT_SECONDS: int(30, 1, 3600),
  /** After the headers, the most time without a body byte, and the grace before the minimum body rate applies. */
  HTTP_BODY_READ_TIMEOUT_SECONDS: int(10, 1, 3600),
  /** The least average body rate once HTTP_BODY_READ_TIMEOUT_SECONDS has passed (0: none). */
  HTTP_BODY_MIN_BYTES_PER_SECOND: int(240, 0, 1_000_000_000),
  HTTP_IDLE_TIMEOUT_SECONDS: int(60, 1, 3600),
  MAX_CONNECTIONS: int(1024, 1, 1_000_000),
  /** Open connections from one address (an IPv6 /48): one client cannot hold the whole cap. */
  MAX_CONNECTIONS_PER_PEER: int(128, 1, 1_000_000),
  /** Requests from one address (an IPv6 /48) whose body has not arrived yet; a new one closes the oldest. */
  MAX_UNFINISHED_BODIES_PER_PEER: int(16, 1, 1_000_000),
  /**
   * Requests held at once by `Prefer: wait` (http/conditional-read.ts), at most half of MAX_CONNECTIONS
   * (a held request keeps its connection); beyond it a request is answered at once.
   */
  MAX_WAITING_REQUESTS: int(512, 0, 1_000_000),
  /** The same for one API key (at most MAX_WAITING_REQUESTS). */
  MAX_WAITING_REQUESTS_PER_KEY: int(64, 0, 1_000_000),
  /** Proxy hops (a number) or comma-separated addresses/CIDRs whose X-Forwarded-For is trusted. */
  TRUST_PROXY: optionalString,
  /** With a hop count in TRUST_PROXY: where those proxies are (default: private addresses). */
  TRUST_PROXY_NETWORKS: optionalString,
  API_KEY_CACHE_TTL_MS: int(2000, 0, 60_000),
});
export type THttpEnv = z.output<typeof ZHttpEnv>;

/** localhost, 127.0.0.0/8 or ::1: a URL only this machine can reach. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return (
    host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host)
  );
}

function trustProxyOf(env: THttpEnv): TrustProxy {
  try {
    return parseTrustProxy(env.TRUST_PROXY, env.TRUST_PROXY_NETWORKS);
  } catch (error) {
    fail((error as Error).message);
  }
}

function publicBaseUrlOf(env: THttpEnv, production: boolean): string {
  const publicBaseUrl = (env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, "");
  if (production && !env.ALLOW_HTTP_PUBLIC_BASE_URL) {
    const url = new URL(publicBaseUrl);
    if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
      fail(
        "PUBLIC_BASE_URL must be an https:// URL when NODE_ENV=production: claim links, sign-in redirects and session cookies would travel in clear text (http:// is accepted for localhost and loopback addresses, or with ALLOW_HTTP_PUBLIC_BASE_URL=true when TLS ends in front of the service)",
      );
    }
  }
  return publicBaseUrl;
}

export function httpConfig(env: THttpEnv & Pick<TServiceEnv, "NODE_ENV">) {
  const production = env.NODE_ENV === "production";
  const trustProxy = trustProxyOf(env);
  return {
    port: env.PORT,
    host: env.HOST ?? (production ? "0.0.0.0" : "127.0.0.1"),
    /** HOST was set (otherwise `host` is the default for NODE_ENV). */
    hostConfigured: env.HOST !== undefined,
    /** Base of claim_url, OAuth redirect URIs and the OpenAPI server; no trailing slash. */
    publicBaseUrl: publicBaseUrlOf(env, production),
    /** Origins /mcp accepts from a browser besides the public one (mcp/origin.ts). */
    mcpAllowedOrigins: commaList(env.MCP_ALLOWED_ORIGINS, (origin) => origin.replace(/\/+$/, "")),
    http: {
      maxBodyBytes: env.MAX_BODY_BYTES,
      trustProxy,
      /** A new connection must deliver a request's headers within this. */
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_SECONDS * SECOND_MS,
      /** A request's body must arrive in full within this (counted from its headers). */
      bodyTimeoutMs: env.HTTP_BODY_TIMEOUT_SECONDS * SECOND_MS,
      /** After the headers, the most time without a body byte; also the grace before bodyMinBytesPerSecond. */
      bodyReadTimeoutMs: env.HTTP_BODY_READ_TIMEOUT_SECONDS * SECOND_MS,
      /** The least average body rate after bodyReadTimeoutMs (0: none). */
      bodyMinBytesPerSecond: env.HTTP_BODY_MIN_BYTES_PER_SECOND,
      /** A keep-alive connection with no request in flight is closed after this. */
      idleTimeoutMs: env.HTTP_IDLE_TIMEOUT_SECONDS * SECOND_MS,
      /** Open connections on the public port (idle ones make room for new ones; see http/server.ts). */
      maxConnections: env.MAX_CONNECTIONS,
      /** Open connections on the public port from one address (at most maxConnections). */
      maxConnectionsPerPeer: Math.min(env.MAX_CONNECTIONS_PER_PEER, env.MAX_CONNECTIONS),
      /** Requests from one address waiting for their body (at most maxConnectionsPerPeer). */
      maxUnfinishedBodiesPerPeer: Math.min(
        env.MAX_UNFINISHED_BODIES_PER_PEER,
        env.MAX_CONNECTIONS_PER_PEER,
        env.MAX_CONNECTIONS,
      ),
      /** Requests held by `Prefer: wait` at once (at most half of maxConnections), and per API key. */
      waiting: waitingLimits(env.MAX_WAITING_REQUESTS, env.MAX_WAITING_REQUESTS_PER_KEY, env.MAX_CONNECTIONS),
    },
    apiKeyCacheTtlMs: env.API_KEY_CACHE_TTL_MS,
  };
}

/**
 * The holds' bounds in the connection budget: a held request keeps its connection, so holds take at most
 * half of MAX_CONNECTIONS, leaving the other half to everything else; one key at most the instance's.
 */
export function waitingLimits(max: number, perKey: number, maxConnections: number) {
  const total = Math.min(max, Math.floor(maxConnections / 2));
  return { max: total, perKey: Math.min(perKey, total) };
}
