-- MCP sessions' API keys (issue 54 item 2, docs/agents.md#a-key-for-the-session):
-- the key create_test_key made in an MCP session, by the SHA-256 hash of the
-- session id the client holds (Mcp-Session-Id), so that any instance serves
-- the session's later calls. Never the key itself: its id, re-read on each use.
-- Written by hand the way `prisma migrate diff` writes it; packages/db's schema
-- test compares the result with schema.prisma. Only adds (expand).
--
-- Applied by packages/db's migrator inside one transaction: no BEGIN/COMMIT.

-- CreateTable
CREATE TABLE "mcp_sessions" (
    "session_hash" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "idle_expires_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mcp_sessions_pkey" PRIMARY KEY ("session_hash")
);

-- CreateIndex
CREATE INDEX "mcp_sessions_api_key_id_idx" ON "mcp_sessions"("api_key_id");

-- CreateIndex
CREATE INDEX "mcp_sessions_idle_expires_at_idx" ON "mcp_sessions"("idle_expires_at");

-- AddForeignKey
ALTER TABLE "mcp_sessions" ADD CONSTRAINT "mcp_sessions_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;
