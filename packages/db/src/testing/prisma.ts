// The generated Prisma client over a Database's own connections: the schema's
// typed model for tests and tools. The service never uses it (it reads and
// writes through `query`/`transaction`, packages/domain/src/store), so it
// lives in the testing entry and the service never loads the generated client.
//
//   const db = withPrisma(await createDatabase({ … }));
//   await db.prisma.project.count();
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { type Database, driverOf, statementName } from "../database.ts";
import { PrismaClient } from "../generated/prisma/client.ts";

/**
 * Prisma's interactive-transaction defaults (2 s to start, 5 s to finish) are
 * too tight for a burst on a busy machine: a test's transaction would fail
 * instead of waiting its turn. The wait to start is longer than the pool's
 * connection timeout, so the pool stays the binding limit.
 */
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 20_000 } as const;

export type PrismaDatabase = Database & { prisma: PrismaClient };

function prismaClientFor(db: Database): PrismaClient {
  const driver = driverOf(db);
  const adapter =
    driver.kind === "postgres"
      ? // The adapter passes the name straight to pg, where undefined means unnamed.
        new PrismaPg(
          driver.pool,
          driver.preparedStatements
            ? { statementNameGenerator: (query) => statementName(query.sql) as string }
            : {},
        )
      : // Runs its transactions through pglite.transaction() too, so statements
        // from either side never interleave with a transaction.
        new PrismaPGlite(driver.pglite);
  const prisma = new PrismaClient({ adapter, transactionOptions: TRANSACTION_OPTIONS });
  driver.beforeClose.push(() => prisma.$disconnect());
  return prisma;
}

/** `db` with `prisma`, the generated client over its connections (made once per Database; closed with it). */
export function withPrisma<D extends Database>(db: D): D & { prisma: PrismaClient } {
  if (!("prisma" in db))
    Object.defineProperty(db, "prisma", { value: prismaClientFor(db), enumerable: true });
  return db as D & { prisma: PrismaClient };
}
