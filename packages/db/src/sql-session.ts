// One database session (a single connection) as the migrator and the test
// harness need it: plain queries, multi-statement scripts and transactions,
// over either a `pg` client or an embedded PGlite instance. Prisma's client is
// not used here on purpose: it runs prepared statements, which cannot hold more
// than one SQL statement.
import type { PGlite, Transaction } from "@electric-sql/pglite";
import type pg from "pg";

export type SqlSession = {
  /** One statement, optionally with `$1`-style parameters. */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** A script of any number of statements, run with the simple query protocol. */
  exec(sql: string): Promise<void>;
  /** Runs `work` inside BEGIN … COMMIT, rolling back when it throws. */
  transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T>;
};

export function pgSession(client: pg.ClientBase): SqlSession {
  const session: SqlSession = {
    async query<Row>(sql: string, params?: unknown[]) {
      const result = await client.query(sql, params);
      return result.rows as Row[];
    },
    async exec(sql) {
      await client.query(sql);
    },
    async transaction(work) {
      await client.query("BEGIN");
      try {
        const result = await work(session);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    },
  };
  return session;
}

function pgliteQueryable(target: PGlite | Transaction): Omit<SqlSession, "transaction"> {
  return {
    async query<Row>(sql: string, params?: unknown[]) {
      const result = await target.query<Row>(sql, params);
      return result.rows;
    },
    async exec(sql) {
      await target.exec(sql);
    },
  };
}

export function pgliteSession(pglite: PGlite): SqlSession {
  return {
    ...pgliteQueryable(pglite),
    // PGlite's own transaction() also holds its mutex, so queries the app sends
    // meanwhile cannot interleave with the transaction's statements.
    transaction: (work) =>
      pglite.transaction((tx) =>
        work({
          ...pgliteQueryable(tx),
          transaction: () => Promise.reject(new Error("nested transactions are not supported")),
        }),
      ),
  };
}
