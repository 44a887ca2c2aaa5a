// What a PostgreSQL server says about its place in a replicated cluster, for
// the metrics operators alert on (deploy/prometheus/alerts.yml): the timeline
// the primary writes on, and how far a standby's replay is behind. Both run as
// any role (the functions are granted to PUBLIC) and read no table.
import type { Sql } from "./database.ts";

/**
 * The timeline of the WAL the server writes now: the first 8 hex digits of
 * the current WAL segment's name. A promotion starts a new timeline, so a
 * primary whose timeline went up is a standby that was promoted (a failover,
 * or a point-in-time restore). Read at once, unlike pg_control_checkpoint(),
 * which shows the new timeline only after the first checkpoint that follows
 * the promotion. Null on a standby (it writes no WAL of its own).
 */
const TIMELINE_SQL = `
  SELECT CASE WHEN pg_is_in_recovery() THEN NULL
              ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END AS timeline`;

export async function serverTimeline(sql: Pick<Sql, "query">): Promise<number | null> {
  const [row] = await sql.query<{ timeline: number | null }>(TIMELINE_SQL);
  return row?.timeline ?? null;
}

/**
 * How far a standby's replay is behind its primary, in seconds: 0 once it has
 * replayed the WAL the primary had written when asked (an idle primary is no
 * lag), else the time since the last transaction it replayed was committed on
 * the primary. Null when the server is not a standby. The primary is asked
 * first: the standby's own received position may end past its last replayed
 * record (a page's end), so it cannot tell "caught up" by itself.
 */
const PRIMARY_LSN_SQL = "SELECT pg_current_wal_lsn()::text AS lsn";
const REPLICATION_LAG_SQL = `
  SELECT CASE WHEN NOT pg_is_in_recovery() THEN NULL
              WHEN pg_last_wal_replay_lsn() >= CAST($1 AS pg_lsn) THEN 0
              ELSE GREATEST(0, extract(epoch FROM now() - pg_last_xact_replay_timestamp()))::float8 END AS lag`;

export async function replicationLagSeconds(
  standby: Pick<Sql, "query">,
  primary: Pick<Sql, "query">,
): Promise<number | null> {
  const [written] = await primary.query<{ lsn: string }>(PRIMARY_LSN_SQL);
  if (!written) return null;
  const [row] = await standby.query<{ lag: number | null }>(REPLICATION_LAG_SQL, [written.lsn]);
  return row?.lag === null || row?.lag === undefined ? null : Number(row.lag);
}
