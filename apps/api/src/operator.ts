// The Deno entry of the operator's tool:
//   npm run operator -- <command> [flags]
// (scripts/bootstrap.mjs runs `deno run … apps/api/src/operator.ts`). Reads the
// same configuration as the service (env.ts), migrates the database, runs one
// command from operator/operator-cli.ts, prints, and exits: 0 done, 1 refused,
// 2 bad usage or configuration.
import { userInfo } from "node:os";
import process from "node:process";
import { createDatabase, type Database } from "@sms/db";
import { createUbillProvider } from "@sms/provider-ubill";
import { pino } from "pino";
import { type Config, ConfigError, parseEnv } from "./env.ts";
import { createLogger, scrubText } from "./logger.ts";
import { parseOperatorArgs, runOperatorCli, USAGE, UsageError } from "./operator/operator-cli.ts";

function exit(code: number, stdout: string[] = [], stderr: string[] = []): never {
  for (const line of stdout) console.log(line);
  for (const line of stderr) console.error(line);
  process.exit(code);
}

function osUser(): string {
  try {
    return userInfo().username || "operator";
  } catch {
    return "operator";
  }
}

const argv = process.argv.slice(2);
try {
  if (parseOperatorArgs(argv).command === "help") exit(0, [USAGE]);
} catch (error) {
  if (error instanceof UsageError) exit(2, [], [`operator: ${error.message}`]);
  throw error;
}

let config: Config;
try {
  config = parseEnv(process.env);
} catch (error) {
  exit(2, [], [`operator: ${error instanceof ConfigError ? error.message : "Invalid configuration"}`]);
}

// Warnings (e.g. uBill refusing our key) go to stderr; never key material.
const logger = createLogger({ level: "warn", destination: pino.destination({ dest: 2, sync: true }) });
let db: Database | undefined;
let code = 1;
let stdout: string[] = [];
let stderr: string[] = [];
try {
  db = await createDatabase({
    databaseUrl: config.database.url,
    migrationUrl: config.database.migrationUrl,
    preparedStatements: config.database.preparedStatements,
    pgliteDataDir: config.database.pgliteDataDir,
    poolSize: 2,
    // The service's deadlines: an unreachable or stuck database ends the command with a clear error.
    connectionTimeoutMs: config.database.connectTimeoutMs,
    statementTimeoutMs: config.database.statementTimeoutMs,
    logger,
  });
  await db.migrate();
  const brands = config.ubill ? createUbillProvider({ ...config.ubill, logger }) : null;
  ({
    exitCode: code,
    stdout,
    stderr,
  } = await runOperatorCli({ argv, config, db, defaultActor: osUser(), brands }));
} catch (error) {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : "unexpected failure";
  stderr = [`operator: ${scrubText(message.split("\n")[0] ?? "")}`];
  code = 1;
} finally {
  await db?.close();
}
exit(code, stdout, stderr);
