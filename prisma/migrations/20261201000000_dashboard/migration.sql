-- The account dashboard (docs/dashboard.md): message status events (the
-- timeline), sender-name requests, server-side dashboard sessions, when each
-- API key was last used, and the indexes the dashboard's paged lists and the
-- operator's searches read. Written by hand the way `prisma migrate diff`
-- writes it; packages/db's schema test compares the result with schema.prisma.
--
-- Applied by packages/db's migrator inside one transaction: no BEGIN/COMMIT.

-- CreateEnum
CREATE TYPE "SenderRequestStatus" AS ENUM ('pending', 'approved', 'refused');

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "last_used_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "message_events" (
    "message_id" TEXT NOT NULL,
    "status" "MessageStatus" NOT NULL,
    "error_code" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "message_events_pkey" PRIMARY KEY ("message_id","status")
);

-- CreateTable
CREATE TABLE "sender_requests" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "status" "SenderRequestStatus" NOT NULL DEFAULT 'pending',
    "requested_by" TEXT NOT NULL,
    "decided_by" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "refusal_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sender_requests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "dashboard_sessions" (
    "id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "name" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "idle_expires_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "dashboard_sessions_pkey" PRIMARY KEY ("id")
);

-- DropIndex (replaced by messages_project_id_created_at_id_idx, which serves the same lookups)
DROP INDEX "messages_project_id_created_at_idx";

-- CreateIndex
CREATE INDEX "accounts_email_idx" ON "accounts"("email");

-- CreateIndex
CREATE INDEX "api_keys_prefix_idx" ON "api_keys"("prefix");

-- CreateIndex
CREATE INDEX "messages_project_id_created_at_id_idx" ON "messages"("project_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "audit_log_created_at_id_idx" ON "audit_log"("created_at", "id");

-- CreateIndex
CREATE INDEX "sender_requests_project_id_created_at_idx" ON "sender_requests"("project_id", "created_at");

-- CreateIndex
CREATE INDEX "sender_requests_status_created_at_id_idx" ON "sender_requests"("status", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "dashboard_sessions_token_hash_key" ON "dashboard_sessions"("token_hash");

-- CreateIndex
CREATE INDEX "dashboard_sessions_idle_expires_at_idx" ON "dashboard_sessions"("idle_expires_at");

-- AddForeignKey
ALTER TABLE "message_events" ADD CONSTRAINT "message_events_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sender_requests" ADD CONSTRAINT "sender_requests_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Not from schema.prisma: the timeline of messages written before this
-- migration, from what their rows already record (created, submitted, and
-- the current state when it is neither).
INSERT INTO "message_events" ("message_id", "status", "error_code", "created_at")
SELECT "id", 'queued', NULL, "created_at" FROM "messages";
INSERT INTO "message_events" ("message_id", "status", "error_code", "created_at")
SELECT "id", 'submitted', NULL, "submitted_at" FROM "messages" WHERE "submitted_at" IS NOT NULL;
INSERT INTO "message_events" ("message_id", "status", "error_code", "created_at")
SELECT "id", "status", "error_code", "updated_at" FROM "messages" WHERE "status" NOT IN ('queued', 'submitted');
