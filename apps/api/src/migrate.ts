// `npm run db:migrate` (scripts/bootstrap.mjs runs it with Deno): applies
// pending migrations without starting the service, and says what it applied.
// Where: DATABASE_MIGRATION_URL, else DATABASE_URL, else PGlite at
// PGLITE_DATA_DIR (config/database.ts, checked as the service checks them).
// Exits 1 with one line on failure.
import process from "node:process";
import { migrateCli } from "@sms/db";
import { ConfigError, parseMigrationEnv } from "./config/index.ts";

let target: ReturnType<typeof parseMigrationEnv>;
try {
  target = parseMigrationEnv(process.env);
} catch (error) {
  console.error(`db:migrate: ${error instanceof ConfigError ? error.message : "Invalid configuration"}`);
  process.exit(1);
}
const result = await migrateCli({ databaseUrl: target.migrationUrl, pgliteDataDir: target.pgliteDataDir });
if (result.exitCode === 0) console.log(result.output);
else console.error(result.error);
process.exit(result.exitCode);
