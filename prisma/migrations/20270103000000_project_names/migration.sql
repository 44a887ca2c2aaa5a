-- A project's name (issue 54 item 5, docs/dashboard.md#settings): what the
-- owner calls it, shown in the project list and the header of its pages; null
-- until named (the pages show the id alone). The length (1–64 characters) is
-- checked by the domain (packages/domain/src/dashboard/project-name.ts).
-- Written by hand the way `prisma migrate diff` writes it; packages/db's
-- schema test compares the result with schema.prisma. Only adds (expand).
--
-- Applied by packages/db's migrator inside one transaction: no BEGIN/COMMIT.

-- AlterTable
ALTER TABLE "projects" ADD COLUMN "name" TEXT;
