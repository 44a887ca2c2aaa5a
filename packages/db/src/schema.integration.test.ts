// The hand-written SQL in prisma/migrations must create exactly what
// schema.prisma describes. On each backend: migrate a fresh database, read what
// it really has (introspect.ts) and compare it with what `prisma migrate diff`
// would create from the generated client's data model (expected-schema.ts).
// The second half proves the comparison has teeth: deliberately altered copies
// of the SQL must be reported, each with exactly the expected difference.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withSqlSession } from "./database.ts";
import { MIGRATIONS_DIR } from "./migrator.ts";
import { availableBackends, createTestDatabase, type TestDatabase } from "./testing/index.ts";
import { type DbSchema, diffSchemas, withAdditions } from "./testing/schema-check/db-schema.ts";
import { expectedSchema } from "./testing/schema-check/expected-schema.ts";
import { introspectSchema } from "./testing/schema-check/introspect.ts";
import { generatedClientSchema, parseDatamodel } from "./testing/schema-check/prisma-dmmf.ts";

const SCHEMA_FILE = join(MIGRATIONS_DIR, "..", "schema.prisma");
const INIT_SQL = readFileSync(join(MIGRATIONS_DIR, "20261122000000_init", "migration.sql"), "utf8");
/** Every later migration, in the order the migrator applies them (the drifts alter the first one). */
const LATER_SQL = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name > "20261122000000_init")
  .map((entry) => entry.name)
  .sort()
  .map((name) => readFileSync(join(MIGRATIONS_DIR, name, "migration.sql"), "utf8"))
  .join("\n");

/** What the migrations add on purpose beyond what schema.prisma can express. */
const SQL_ONLY_ADDITIONS: Partial<DbSchema> = {
  constraints: {
    projects_credit_balance_check: {
      table: "projects",
      type: "CHECK",
      columns: ["credit_balance"],
      definition: "CHECK (credit_balance >= 0)",
    },
    verifications_attempts_remaining_check: {
      table: "verifications",
      type: "CHECK",
      columns: ["attempts_remaining"],
      definition: "CHECK (attempts_remaining >= 0)",
    },
  },
};

/** `sql` with the single occurrence of `from` replaced; fails if `from` is not there exactly once. */
function replaceOnce(sql: string, from: string, to: string): string {
  const parts = sql.split(from);
  if (parts.length !== 2) throw new Error(`expected exactly one ${JSON.stringify(from)} in the migration`);
  return parts.join(to);
}

type Drift = { name: string; alter(sql: string): string; reported: string[] };

const DRIFTS: Drift[] = [
  {
    name: "a missing index",
    alter: (sql) =>
      replaceOnce(sql, 'CREATE INDEX "messages_next_check_at_idx" ON "messages"("next_check_at");', ""),
    reported: ["index messages_next_check_at_idx: missing from the database"],
  },
  {
    name: "a nullable column made NOT NULL",
    alter: (sql) => replaceOnce(sql, '"revoked_at" TIMESTAMPTZ(3),', '"revoked_at" TIMESTAMPTZ(3) NOT NULL,'),
    reported: ["column api_keys.revoked_at: nullable is false in the database, schema.prisma says true"],
  },
  {
    name: "a NOT NULL column made nullable",
    alter: (sql) => replaceOnce(sql, '"recipient_masked" TEXT NOT NULL,', '"recipient_masked" TEXT,'),
    reported: [
      "column messages.recipient_masked: nullable is true in the database, schema.prisma says false",
    ],
  },
  {
    name: "a different column type",
    alter: (sql) => replaceOnce(sql, '"segments" INTEGER,', '"segments" BIGINT,'),
    reported: ['column messages.segments: type is "bigint" in the database, schema.prisma says "integer"'],
  },
  {
    name: "a timestamp without time zone",
    alter: (sql) =>
      replaceOnce(sql, '"window_start" TIMESTAMPTZ(3) NOT NULL,', '"window_start" TIMESTAMP(3) NOT NULL,'),
    reported: [
      'column rate_limit_counters.window_start: type is "timestamp(3) without time zone" in the database, schema.prisma says "timestamp(3) with time zone"',
    ],
  },
  {
    name: "a different default",
    alter: (sql) =>
      replaceOnce(
        sql,
        '"credits_reserved" INTEGER NOT NULL DEFAULT 0,',
        '"credits_reserved" INTEGER NOT NULL DEFAULT 1,',
      ),
    reported: ['column messages.credits_reserved: default is "1" in the database, schema.prisma says "0"'],
  },
  {
    name: "a missing default",
    alter: (sql) =>
      replaceOnce(
        sql,
        '"status" "MessageStatus" NOT NULL DEFAULT \'queued\',',
        '"status" "MessageStatus" NOT NULL,',
      ),
    reported: [
      'column messages.status: default is null in the database, schema.prisma says "\'queued\'::\\"MessageStatus\\""',
    ],
  },
  {
    name: "a unique index made plain",
    alter: (sql) =>
      replaceOnce(sql, 'CREATE UNIQUE INDEX "api_keys_key_hash_key"', 'CREATE INDEX "api_keys_key_hash_key"'),
    reported: ["index api_keys_key_hash_key: unique is false in the database, schema.prisma says true"],
  },
  {
    name: "index columns in another order",
    alter: (sql) =>
      replaceOnce(sql, 'ON "messages"("status", "created_at");', 'ON "messages"("created_at", "status");'),
    reported: [
      'index messages_status_created_at_idx: columns is ["created_at","status"] in the database, schema.prisma says ["status","created_at"]',
    ],
  },
  {
    name: "an index not named the way Prisma names it",
    alter: (sql) => replaceOnce(sql, '"api_keys_project_id_idx"', '"api_keys_project_idx"'),
    reported: [
      "index api_keys_project_id_idx: missing from the database",
      "index api_keys_project_idx: in the database but not in schema.prisma",
    ],
  },
  {
    name: "a unique constraint instead of Prisma's unique index",
    alter: (sql) =>
      replaceOnce(
        sql,
        'CREATE UNIQUE INDEX "claim_tokens_token_hash_key" ON "claim_tokens"("token_hash");',
        'ALTER TABLE "claim_tokens" ADD CONSTRAINT "claim_tokens_token_hash_key" UNIQUE ("token_hash");',
      ),
    reported: ["constraint claim_tokens_token_hash_key: in the database but not in schema.prisma"],
  },
  {
    name: "another onDelete rule",
    alter: (sql) =>
      replaceOnce(
        sql,
        'REFERENCES "accounts"("id") ON DELETE SET NULL',
        'REFERENCES "accounts"("id") ON DELETE CASCADE',
      ),
    reported: [
      'foreign key projects_account_id_fkey: onDelete is "CASCADE" in the database, schema.prisma says "SET NULL"',
    ],
  },
  {
    name: "a missing foreign key",
    alter: (sql) =>
      replaceOnce(
        sql,
        'ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;',
        "",
      ),
    reported: ["foreign key credit_ledger_project_id_fkey: missing from the database"],
  },
  {
    name: "a missing enum value",
    alter: (sql) => replaceOnce(sql, "'failed', 'unknown'", "'failed'"),
    reported: [
      'enum MessageStatus: values is ["queued","submitted","delivered","undeliverable","failed"] in the database, schema.prisma says ["queued","submitted","delivered","undeliverable","failed","unknown"]',
    ],
  },
  {
    name: "an extra column",
    alter: (sql) => replaceOnce(sql, '"name" TEXT,\n', '"name" TEXT,\n    "nickname" TEXT,\n'),
    reported: ["column accounts.nickname: in the database but not in schema.prisma"],
  },
  {
    name: "a missing table",
    alter: (sql) =>
      replaceOnce(
        sql,
        `CREATE TABLE "rate_limit_counters" (
    "bucket" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rate_limit_counters_pkey" PRIMARY KEY ("bucket","window_start")
);`,
        "",
      ).replace(
        'CREATE INDEX "rate_limit_counters_expires_at_idx" ON "rate_limit_counters"("expires_at");',
        "",
      ),
    reported: [
      "table rate_limit_counters: missing from the database",
      "index rate_limit_counters_expires_at_idx: missing from the database",
      "index rate_limit_counters_pkey: missing from the database",
      "constraint rate_limit_counters_pkey: missing from the database",
    ],
  },
  {
    name: "the CHECK on the credit balance left out",
    alter: (sql) =>
      replaceOnce(
        sql,
        'ALTER TABLE "projects" ADD CONSTRAINT "projects_credit_balance_check" CHECK ("credit_balance" >= 0);',
        "",
      ),
    reported: ["constraint projects_credit_balance_check: missing from the database"],
  },
];

describe.each(await availableBackends())("schema on %s", (kind) => {
  let test: TestDatabase;
  let expected: DbSchema;

  beforeAll(async () => {
    test = await createTestDatabase(kind);
    expected = withAdditions(
      expectedSchema(parseDatamodel(generatedClientSchema(test.db.prisma))),
      SQL_ONLY_ADDITIONS,
    );
  });
  afterAll(async () => {
    await test?.drop();
  });

  it("the generated client was generated from the current prisma/schema.prisma", () => {
    // The client embeds its schema reformatted, so compare the parsed models.
    const fromClient = parseDatamodel(generatedClientSchema(test.db.prisma));
    const fromFile = parseDatamodel(readFileSync(SCHEMA_FILE, "utf8"));
    expect(fromClient, "run `npm run db:generate`").toEqual(fromFile);
  });

  it("the migrated database has exactly what schema.prisma describes", async () => {
    const actual = await withSqlSession(test.db, (session) =>
      introspectSchema(session, { excludeTables: ["_prisma_migrations"] }),
    );
    expect(diffSchemas(expected, actual)).toEqual([]);
    // Not an empty comparison: every model is there.
    expect(Object.keys(actual.tables).sort()).toEqual(
      [
        "account_identities",
        "accounts",
        "api_keys",
        "audit_log",
        "claim_tokens",
        "credit_ledger",
        "dashboard_sessions",
        "idempotency_records",
        "mcp_sessions",
        "message_events",
        "messages",
        "projects",
        "rate_limit_counters",
        "request_log",
        "sender_requests",
        "verifications",
      ].sort(),
    );
  });

  it("the CHECK keeps credit balances from going negative", async () => {
    await test.db.prisma.project.create({ data: { id: "prj_check" } });
    await expect(
      test.db.prisma.project.update({ where: { id: "prj_check" }, data: { creditBalance: -1 } }),
    ).rejects.toThrow();
    await test.db.prisma.project.delete({ where: { id: "prj_check" } });
  });

  it.each(DRIFTS)("reports $name", async ({ alter, reported }) => {
    const altered = `${alter(INIT_SQL)}\n${LATER_SQL}`;
    const schemaName = `drift_${Math.random().toString(36).slice(2, 10)}`;
    // Applied into a schema of its own, so the check reads only the altered copy.
    const actual = await withSqlSession(test.db, async (session) => {
      await session.exec(`CREATE SCHEMA ${schemaName}; SET search_path TO ${schemaName}`);
      try {
        await session.exec(altered);
        return await introspectSchema(session);
      } finally {
        await session.exec(`RESET search_path; DROP SCHEMA ${schemaName} CASCADE`);
      }
    });
    expect(diffSchemas(expected, actual)).toEqual(reported);
  });

  it("reports nothing for the unaltered SQL applied the same way", async () => {
    const actual = await withSqlSession(test.db, async (session) => {
      await session.exec("CREATE SCHEMA drift_none; SET search_path TO drift_none");
      try {
        await session.exec(`${INIT_SQL}\n${LATER_SQL}`);
        return await introspectSchema(session);
      } finally {
        await session.exec("RESET search_path; DROP SCHEMA drift_none CASCADE");
      }
    });
    expect(diffSchemas(expected, actual)).toEqual([]);
  });
});
