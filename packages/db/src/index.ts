// @sms/db: the Prisma client factory (PostgreSQL or embedded PGlite), the
// migrator, and the generated client's types. Other packages import from here
// only; the test harness is the separate entry "@sms/db/testing".
export {
  type CreateDatabaseOptions,
  createDatabase,
  type Database,
  type DatabaseKind,
  type Sql,
  DEFAULT_PING_TIMEOUT_MS,
  DEFAULT_POOL_SIZE,
} from "./database.ts";
export type {
  Account,
  AccountIdentity,
  ApiKey,
  AuditEntry,
  ClaimToken,
  CreditLedgerEntry,
  IdempotencyRecord,
  Message,
  Project,
  RateLimitCounter,
} from "./generated/prisma/client.ts";
export { CreditEntryKind, KeyMode, MessageStatus, Prisma, PrismaClient } from "./generated/prisma/client.ts";
export type { DatabaseLogger } from "./logger.ts";
export {
  DatabaseUnavailableError,
  isDatabaseUnavailable,
  type UnavailableReason,
  unavailableReason,
} from "./unavailable.ts";
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
