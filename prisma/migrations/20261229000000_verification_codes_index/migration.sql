-- The verification codes still held (code_hash not yet cleared), by creation:
-- the code purge (packages/domain/src/store/verifications.ts PURGE_CODES_SQL)
-- reads these rows alone, where it read every verification ever made on each
-- round (claimed projects keep theirs). Partial: a cleared row leaves the index.
-- CreateIndex
CREATE INDEX "verifications_created_at_idx" ON "verifications"("created_at") WHERE code_hash IS NOT NULL;
