-- The initial schema, written by hand the way `prisma migrate diff --from-empty
-- --to-schema prisma/schema.prisma --script` writes it (Prisma's schema engine
-- cannot be downloaded here, see packages/db/README.md "Migrations").
-- packages/db's schema test migrates a fresh database and compares it with the
-- model in schema.prisma: tables, columns, types, nullability, defaults,
-- primary keys, unique and plain indexes, foreign keys and enums.
--
-- Applied by packages/db's migrator inside one transaction: do not add
-- BEGIN/COMMIT or statements that cannot run in a transaction here.

-- CreateEnum
CREATE TYPE "KeyMode" AS ENUM ('test', 'live');

-- CreateEnum
CREATE TYPE "MessageStatus" AS ENUM ('queued', 'submitted', 'delivered', 'undeliverable', 'failed', 'unknown');

-- CreateEnum
CREATE TYPE "CreditEntryKind" AS ENUM ('grant_paid', 'grant_free', 'reservation', 'refund');

-- CreateTable
CREATE TABLE "projects" (
    "id" TEXT NOT NULL,
    "account_id" TEXT,
    "claimed_at" TIMESTAMPTZ(3),
    "suspended_at" TIMESTAMPTZ(3),
    "sender" TEXT,
    "sender_brand_id" INTEGER,
    "credit_balance" INTEGER NOT NULL DEFAULT 0,
    "has_paid_credits" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "projects_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "email" TEXT,
    "name" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "account_identities" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "email" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "account_identities_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "mode" "KeyMode" NOT NULL,
    "key_hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "claim_tokens" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "used_by_account_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "claim_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messages" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "api_key_id" TEXT,
    "mode" "KeyMode" NOT NULL,
    "recipient_masked" TEXT NOT NULL,
    "recipient_ciphertext" BYTEA,
    "text_ciphertext" BYTEA,
    "template" TEXT NOT NULL,
    "locale" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "segments" INTEGER,
    "encoding" TEXT,
    "status" "MessageStatus" NOT NULL DEFAULT 'queued',
    "error_code" TEXT,
    "error_message" TEXT,
    "provider" TEXT NOT NULL,
    "provider_ref" TEXT,
    "credits_reserved" INTEGER NOT NULL DEFAULT 0,
    "next_check_at" TIMESTAMPTZ(3),
    "submitted_at" TIMESTAMPTZ(3),
    "text_purged_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "mode" "KeyMode" NOT NULL,
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "response_body" JSONB,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "credit_ledger" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "kind" "CreditEntryKind" NOT NULL,
    "amount" INTEGER NOT NULL,
    "message_id" TEXT,
    "note" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "credit_ledger_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "rate_limit_counters" (
    "bucket" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rate_limit_counters_pkey" PRIMARY KEY ("bucket","window_start")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "project_id" TEXT,
    "details" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "projects_account_id_idx" ON "projects"("account_id");

-- CreateIndex
CREATE INDEX "projects_claimed_at_created_at_idx" ON "projects"("claimed_at", "created_at");

-- CreateIndex
CREATE INDEX "account_identities_account_id_idx" ON "account_identities"("account_id");

-- CreateIndex
CREATE UNIQUE INDEX "account_identities_provider_subject_key" ON "account_identities"("provider", "subject");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_project_id_idx" ON "api_keys"("project_id");

-- CreateIndex
CREATE UNIQUE INDEX "claim_tokens_token_hash_key" ON "claim_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "claim_tokens_project_id_idx" ON "claim_tokens"("project_id");

-- CreateIndex
CREATE INDEX "messages_project_id_created_at_idx" ON "messages"("project_id", "created_at");

-- CreateIndex
CREATE INDEX "messages_next_check_at_idx" ON "messages"("next_check_at");

-- CreateIndex
CREATE INDEX "messages_status_created_at_idx" ON "messages"("status", "created_at");

-- CreateIndex
CREATE INDEX "messages_text_purged_at_created_at_idx" ON "messages"("text_purged_at", "created_at");

-- CreateIndex
CREATE INDEX "idempotency_records_expires_at_idx" ON "idempotency_records"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "idempotency_records_project_id_mode_key_key" ON "idempotency_records"("project_id", "mode", "key");

-- CreateIndex
CREATE INDEX "credit_ledger_project_id_created_at_idx" ON "credit_ledger"("project_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "credit_ledger_message_id_kind_key" ON "credit_ledger"("message_id", "kind");

-- CreateIndex
CREATE INDEX "rate_limit_counters_expires_at_idx" ON "rate_limit_counters"("expires_at");

-- CreateIndex
CREATE INDEX "audit_log_project_id_created_at_idx" ON "audit_log"("project_id", "created_at");

-- AddForeignKey
ALTER TABLE "projects" ADD CONSTRAINT "projects_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "account_identities" ADD CONSTRAINT "account_identities_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claim_tokens" ADD CONSTRAINT "claim_tokens_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "idempotency_records" ADD CONSTRAINT "idempotency_records_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Not from schema.prisma (Prisma cannot express CHECK constraints, and
-- `prisma migrate diff` would not write this): the cached credit balance can
-- never go negative, so a reservation that would overdraw a project fails in
-- the database even if two requests race. The schema test lists it as an
-- allowed addition.
ALTER TABLE "projects" ADD CONSTRAINT "projects_credit_balance_check" CHECK ("credit_balance" >= 0);
