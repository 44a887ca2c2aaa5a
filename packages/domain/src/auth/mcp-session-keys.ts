// An MCP session's own API key (issue 54 item 2, docs/agents.md#a-key-for-the-session).
// A hosted agent cannot set its MCP server's Authorization header, so the key
// create_test_key makes in a session serves that session's later calls that
// carry no Authorization. The client holds the session id (Mcp-Session-Id,
// random, made at initialize); the database holds its SHA-256 hash and the
// key's id (store/mcp-sessions.ts), never the key, so any instance serves the
// session. Each use reads the key's row again (a revoked key or a suspended
// project ends it at once) and renews the idle expiry.
import { randomToken, sha256Hex } from "@sms/crypto";
import { DAY_MS, MINUTE_MS } from "../model/time.ts";
import type { Clock } from "../ports.ts";
import { inBatches } from "../in-batches.ts";
import type { Store } from "../store/index.ts";
import { type Authentication, authenticationOf, KEY_USE_RESOLUTION_MS } from "./authenticate-api-key.ts";

/** How long a session's key serves it: ended after `idleMs` unused, and `maxMs` after create_test_key. */
export const MCP_SESSION_KEY_LIFETIME = { idleMs: 60 * MINUTE_MS, maxMs: DAY_MS } as const;

/** A session id as newMcpSessionId makes it: 32 random bytes, base64url. */
const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A new MCP session id (the Mcp-Session-Id of an initialize answer). */
export function newMcpSessionId(): string {
  return randomToken(32);
}

export type McpSessionDeps = { store: Pick<Store, "mcpSessions" | "keys">; clock: Clock };

export type BindMcpSessionKeyResult = { ok: true; expiresAt: Date } | { ok: false; code: "no_session" };

/** Binds `apiKey` (just made) to the session; it replaces any key the session had. */
export async function bindMcpSessionKey(
  deps: McpSessionDeps,
  input: { sessionId: string; apiKey: string },
): Promise<BindMcpSessionKeyResult> {
  if (!SESSION_ID_PATTERN.test(input.sessionId)) return { ok: false, code: "no_session" };
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + MCP_SESSION_KEY_LIFETIME.maxMs);
  const bound = await deps.store.mcpSessions.bind({
    sessionHash: await sha256Hex(input.sessionId),
    keyHash: await sha256Hex(input.apiKey),
    now,
    idleExpiresAt: new Date(now.getTime() + MCP_SESSION_KEY_LIFETIME.idleMs),
    expiresAt,
  });
  return bound ? { ok: true, expiresAt } : { ok: false, code: "no_session" };
}

/**
 * What the session's key authenticates, as a header's key would
 * (authenticate-api-key.ts); `unauthorized` when the session has no live key.
 */
export async function resumeMcpSessionKey(
  deps: McpSessionDeps,
  input: { sessionId: string },
): Promise<Authentication> {
  if (!SESSION_ID_PATTERN.test(input.sessionId)) return { ok: false, code: "unauthorized" };
  const now = deps.clock.now();
  const row = await deps.store.mcpSessions.resume(
    await sha256Hex(input.sessionId),
    now,
    new Date(now.getTime() + MCP_SESSION_KEY_LIFETIME.idleMs),
  );
  if (!row) return { ok: false, code: "unauthorized" };
  const result = authenticationOf(row);
  if (result.ok) {
    // The dashboard's "last used", as for a header's key (at most one write a minute).
    try {
      await deps.store.keys.touch(row.id, now, new Date(now.getTime() - KEY_USE_RESOLUTION_MS));
    } catch {
      // Only a display value.
    }
  }
  return result;
}

/** The client ended the session (DELETE /mcp): its key no longer serves it. */
export async function endMcpSession(
  deps: { store: Pick<Store, "mcpSessions"> },
  input: { sessionId: string },
): Promise<{ ok: true; ended: boolean }> {
  if (!SESSION_ID_PATTERN.test(input.sessionId)) return { ok: true, ended: false };
  return { ok: true, ended: await deps.store.mcpSessions.delete(await sha256Hex(input.sessionId)) };
}

/** Deletes the bindings past their idle expiry (they are refused before that anyway). */
export async function purgeMcpSessions(
  deps: { store: Pick<Store, "mcpSessions"> },
  input: { now: Date; batchSize: number },
): Promise<{ purged: number }> {
  return {
    purged: await inBatches(input.batchSize, () =>
      deps.store.mcpSessions.purgeExpired(input.now, input.batchSize),
    ),
  };
}
