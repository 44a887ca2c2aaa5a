// The database's clock: the one time every instance shares. The service
// decides on it (database-clock.ts), never on an instance's own clock.
import type { Sql } from "@sms/db";

const NOW_SQL = "SELECT now() AS now";

export function databaseTimeStore(sql: Sql) {
  return {
    /** The database's current time (its `now()`). */
    async now(): Promise<Date> {
      const [row] = await sql.query<{ now: Date | string }>(NOW_SQL);
      if (!row) throw new Error("SELECT now() returned no row");
      return new Date(row.now);
    },
  };
}

export type DatabaseTimeStore = ReturnType<typeof databaseTimeStore>;
