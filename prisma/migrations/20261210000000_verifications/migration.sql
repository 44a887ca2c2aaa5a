-- Verifications (issue 22, docs/verifications.md): a one-time code the
-- service draws, sends through the message path and checks. Only a keyed
-- hash of the code is kept (HMAC under the message keyring), and it is
-- cleared with the message's text. Written by hand the way `prisma migrate
-- diff` writes it; packages/db's schema test compares the result with
-- schema.prisma, and lists the CHECK below as an allowed addition.
--
-- Applied by packages/db's migrator inside one transaction: no BEGIN/COMMIT.

-- CreateEnum
CREATE TYPE "VerificationStatus" AS ENUM ('pending', 'approved', 'expired', 'canceled', 'max_attempts_reached', 'send_failed');

-- CreateTable
CREATE TABLE "verifications" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "mode" "KeyMode" NOT NULL,
    "message_id" TEXT NOT NULL,
    "recipient_masked" TEXT NOT NULL,
    "recipient_fingerprint" TEXT NOT NULL,
    "template" TEXT NOT NULL,
    "locale" TEXT NOT NULL,
    "code_hash" TEXT,
    "status" "VerificationStatus" NOT NULL DEFAULT 'pending',
    "attempts_remaining" INTEGER NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "approved_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "verifications_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "verifications_message_id_key" ON "verifications"("message_id");

-- CreateIndex
CREATE INDEX "verifications_project_id_created_at_id_idx" ON "verifications"("project_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "verifications_project_id_mode_recipient_fingerprint_status_idx" ON "verifications"("project_id", "mode", "recipient_fingerprint", "status");

-- AddForeignKey
ALTER TABLE "verifications" ADD CONSTRAINT "verifications_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Not expressible in schema.prisma: a check can never take a verification
-- below zero attempts, even if two checks raced.
ALTER TABLE "verifications" ADD CONSTRAINT "verifications_attempts_remaining_check" CHECK ("attempts_remaining" >= 0);
