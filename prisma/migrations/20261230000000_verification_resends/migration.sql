-- Verifications, issue 53 (docs/verifications.md#a-second-start-resends-the-same-code):
--
-- code_ciphertext: the code, AES-256-GCM under the message keyring (the
--   verification id as associated data), as the message text that carries it
--   already is. Held only while the verification is pending, so that a second
--   start to the same number and template sends the same code again; cleared
--   when it leaves pending, and with the code hash by the purge.
-- attempts_at_start: the wrong codes the verification accepted when it was
--   answered (5, or fewer when it carried on an earlier one's code and
--   attempts): its replays answer that first answer.
-- unconfirmed: written true with the row, before its SMS; false once the
--   start saw its message written. The recovery sweep deletes a row still
--   unconfirmed long after and without a message (a start killed between the
--   two writes), found through the partial index: those rows alone.
--
-- Expand-only: every column has a default, so the previous release's
-- inserts still work. Existing rows that point at no message are marked for
-- the sweep.
--
-- Applied by packages/db's migrator inside one transaction: no BEGIN/COMMIT.

-- AlterTable
ALTER TABLE "verifications" ADD COLUMN "code_ciphertext" BYTEA,
ADD COLUMN "attempts_at_start" INTEGER NOT NULL DEFAULT 5,
ADD COLUMN "unconfirmed" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX "verifications_unconfirmed_created_at_idx" ON "verifications"("created_at") WHERE unconfirmed = true;

-- The rows a crash already left without their message.
UPDATE "verifications" v SET "unconfirmed" = true
WHERE NOT EXISTS (SELECT 1 FROM "messages" m WHERE m."id" = v."message_id");
