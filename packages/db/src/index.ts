// @sms/db: what the service runs on: the database (PostgreSQL or embedded
// PGlite, statements and transactions), the migrator, and what an outage looks
// like. Other packages import from here only. The generated Prisma client, the
// schema check and the test harness are the separate entry "@sms/db/testing".
export {
  type CreateDatabaseOptions,
  createDatabase,
  type Database,
  type DatabaseKind,
  DEFAULT_PING_TIMEOUT_MS,
  DEFAULT_POOL_SIZE,
  isStatementRefusal,
  type Sql,
  STATEMENT_REFUSED,
  statementName,
  type TransactionSql,
  unnamedForFirst,
} from "./database.ts";
export { type Listener, type ListenOptions, listen } from "./listen.ts";
export type { DatabaseLogger } from "./logger.ts";
export { type MigrateCliOptions, type MigrateCliResult, migrateCli } from "./migrate-cli.ts";
export {
  type BreakingChange,
  checkMigrations,
  findBreakingChanges,
  GRANDFATHERED,
  GRANDFATHERED_UNTIL,
  type MigrationViolation,
} from "./migration-safety.ts";
export {
  MIGRATION_LOCK_KEY,
  MIGRATIONS_DIR,
  type MigrateOptions,
  type MigrateResult,
  type Migration,
  MigrationError,
  migratePglite,
  migratePostgres,
  readMigrations,
} from "./migrator.ts";
export {
  type AnyStatement,
  type Param,
  params,
  type Raw,
  type Statement,
  sql,
  type ValuesOfStatement,
} from "./named-sql.ts";
export {
  DEFAULT_REPLICA_RETRY_AFTER_MS,
  type OpenReadReplicaOptions,
  openReadReplica,
  type ReadFallbackReason,
  type ReadReplica,
} from "./read-replica.ts";
export { replicationLagSeconds, serverTimeline } from "./server-status.ts";
export {
  DatabaseUnavailableError,
  isDatabaseUnavailable,
  type UnavailableReason,
  unavailableReason,
} from "./unavailable.ts";
