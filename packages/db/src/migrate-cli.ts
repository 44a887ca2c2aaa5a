// `npm run db:migrate` (apps/api/src/migrate.ts is the process, and reads the
// configuration): applies pending migrations and says what it applied.
//   databaseUrl set   → that PostgreSQL database (the caller passes
//                       DATABASE_MIGRATION_URL when set: PostgreSQL itself,
//                       when DATABASE_URL is a pooler)
//   databaseUrl unset → PGlite at pgliteDataDir (created when missing)
import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { errorMessage } from "./logger.ts";
import { type MigrateResult, migratePglite, migratePostgres } from "./migrator.ts";

export type MigrateCliOptions = {
  /** PostgreSQL; when absent, PGlite at `pgliteDataDir`. */
  databaseUrl: string | undefined;
  pgliteDataDir: string;
};

/** What to print, and the exit code: 0 with what was applied, or 1 with one line saying why not. */
export type MigrateCliResult = { exitCode: 0; output: string } | { exitCode: 1; error: string };

/** Applies pending migrations. */
export async function migrateCli(options: MigrateCliOptions): Promise<MigrateCliResult> {
  try {
    return { exitCode: 0, output: await migrate(options) };
  } catch (error) {
    return { exitCode: 1, error: `db:migrate: ${errorMessage(error).replace(/\s+/g, " ").trim()}` };
  }
}

async function migrate({ databaseUrl, pgliteDataDir }: MigrateCliOptions): Promise<string> {
  let result: MigrateResult;
  let target: string;
  if (databaseUrl) {
    target = "PostgreSQL";
    result = await migratePostgres(databaseUrl);
  } else {
    target = `PGlite at ${pgliteDataDir}`;
    await mkdir(pgliteDataDir, { recursive: true });
    const pglite = await PGlite.create(pgliteDataDir);
    try {
      result = await migratePglite(pglite);
    } finally {
      await pglite.close();
    }
  }
  if (result.applied.length === 0) return `db:migrate: ${target} is up to date`;
  return [`db:migrate: applied to ${target}:`, ...result.applied.map((name) => `  ${name}`)].join("\n");
}
