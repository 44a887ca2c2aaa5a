-- The developer console (issue 23, docs/dashboard.md): the per-project request
-- log, a key's name, the daily credit cap (with the day's reserved credits on
-- the project row, so the cap is checked in the reservation's own statement),
-- and the low-balance threshold. Written by hand the way `prisma migrate diff`
-- writes it; packages/db's schema test compares the result with schema.prisma.
--
-- Applied by packages/db's migrator inside one transaction: no BEGIN/COMMIT.

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "name" TEXT;

-- AlterTable
ALTER TABLE "projects" ADD COLUMN "daily_credit_cap" INTEGER,
ADD COLUMN "daily_credits_day" DATE,
ADD COLUMN "daily_credits_used" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "low_balance_threshold" INTEGER;

-- CreateTable
CREATE TABLE "request_log" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "key_id" TEXT,
    "mode" "KeyMode",
    "method" TEXT NOT NULL,
    "route" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "error_code" TEXT,
    "idempotency_key" TEXT,
    "replayed" BOOLEAN NOT NULL DEFAULT false,
    "duration_ms" INTEGER NOT NULL,
    "message_id" TEXT,
    "verification_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "request_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "request_log_project_id_created_at_id_idx" ON "request_log"("project_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "request_log_message_id_idx" ON "request_log"("message_id");

-- CreateIndex
CREATE INDEX "request_log_project_id_idempotency_key_idx" ON "request_log"("project_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "request_log_created_at_idx" ON "request_log"("created_at");

-- AddForeignKey
ALTER TABLE "request_log" ADD CONSTRAINT "request_log_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
