// Prisma CLI configuration. Only `prisma generate` is used here: migrations are
// plain SQL applied by packages/db's migrator (see docs/operations.md, "Migrations").
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
});
