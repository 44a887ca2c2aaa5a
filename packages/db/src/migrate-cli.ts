// `npm run db:migrate`: applies pending migrations and says what it applied.
//   DATABASE_URL set   → that PostgreSQL database (through DATABASE_MIGRATION_URL
//                        when set: PostgreSQL itself, when DATABASE_URL is a pooler)
//   DATABASE_URL unset → PGlite at PGLITE_DATA_DIR (default .data/pglite in the repository)
// Runs under Deno (scripts/bootstrap.mjs) and Node; exits 1 with one line on failure.
import { mkdir } from "node:fs/promises";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { errorMessage } from "./logger.ts";
import { type MigrateResult, migratePglite, migratePostgres } from "./migrator.ts";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

async function main(): Promise<string> {
  const databaseUrl = process.env.DATABASE_MIGRATION_URL || process.env.DATABASE_URL;
  let result: MigrateResult;
  let target: string;
  if (databaseUrl) {
    target = "PostgreSQL";
    result = await migratePostgres(databaseUrl);
  } else {
    const dataDir = process.env.PGLITE_DATA_DIR || `${REPO_ROOT}.data/pglite`;
    target = `PGlite at ${dataDir}`;
    await mkdir(dataDir, { recursive: true });
    const pglite = await PGlite.create(dataDir);
    try {
      result = await migratePglite(pglite);
    } finally {
      await pglite.close();
    }
  }
  if (result.applied.length === 0) return `db:migrate: ${target} is up to date`;
  return [`db:migrate: applied to ${target}:`, ...result.applied.map((name) => `  ${name}`)].join("\n");
}

try {
  console.log(await main());
  process.exit(0);
} catch (error) {
  console.error(`db:migrate: ${errorMessage(error).replace(/\s+/g, " ").trim()}`);
  process.exit(1);
}
