// A read replica (DATABASE_READ_URL): a second pool, over a PostgreSQL
// streaming standby, for the statements that only read. It is an `Sql` like
// the primary, so the store's read functions run on either unchanged.
//
// A replica that fails never fails a read: the statement runs again on the
// primary (reason `replica_error`). When the replica is unreachable (it cannot
// connect, a connection broke, a statement ran out of time, the server is
// shutting down), a circuit breaker sends every read straight to the primary
// for `retryAfterMs`; after that one read tries the replica again while the
// others keep going to the primary, so a silent replica costs one connect
// deadline per `retryAfterMs`, never one per request. Other errors (a query
// cancelled by a recovery conflict, a table the standby has not replayed yet)
// fall back for that statement only.
//
// A replica that answers but is behind by more than `maxLagMs` (the
// read-your-writes window, DATABASE_READ_FALLBACK_WINDOW_MS) is skipped too
// (reason `replica_behind`): past the window a row it has not replayed would
// be "not found" (replica-lag.ts). The log says so once when it falls behind
// and once when it has caught up.
//
// Readiness is the primary's alone: nothing here is pinged by /readyz.
import { type CreateDatabaseOptions, createDatabase, type Database, type Sql } from "./database.ts";
import { consoleLogger } from "./logger.ts";
import { lagCheckInterval, type ReplicaLagState, watchReplicaLag } from "./replica-lag.ts";
import { replicationLagSeconds } from "./server-status.ts";
import { unavailableReason } from "./unavailable.ts";

/** Why a read went to the primary instead of the replica. */
export type ReadFallbackReason =
  /** The replica failed the statement, or the breaker is open after it was unreachable. */
  | "replica_error"
  /** The replica did not have a row younger than the read-your-writes window (the store decides: store/reads.ts). */
  | "not_found_recent"
  /** The replica lacks writes older than the read-your-writes window (replica-lag.ts). */
  | "replica_behind";

/** How long reads skip an unreachable replica before one tries it again (DATABASE_READ_RETRY_AFTER_MS). */
export const DEFAULT_REPLICA_RETRY_AFTER_MS = 5_000;

export type ReadReplica = Sql & {
  /** The replica's own pool (for metrics). */
  poolStats(): ReturnType<Database["poolStats"]>;
  /** Whether reads currently skip the replica (the breaker is open). */
  bypassed(): boolean;
  /** Whether reads currently skip the replica because it is behind by more than `maxLagMs` (as last measured). */
  behind(): boolean;
  /** The standby's replay lag behind the primary, asked of the standby itself, with no fallback (server-status.ts). */
  lagSeconds(): Promise<number | null>;
  close(): Promise<void>;
};

export type OpenReadReplicaOptions = Omit<
  CreateDatabaseOptions,
  "databaseUrl" | "pgliteDataDir" | "migrationUrl" | "migrationsDir"
> & {
  /** The standby's postgresql:// URL. */
  replicaUrl: string;
  /** Where a read goes when the replica cannot serve it. */
  primary: Sql;
  /** Called once per read that went to the primary instead. */
  onFallback?: (reason: ReadFallbackReason) => void;
  retryAfterMs?: number;
  /**
   * Reads skip a replica that lacks writes older than this (the read-your-writes window); its lag is
   * measured at most every `lagCheckEveryMs` (default: a quarter of it, at most 1 s). 0 or unset: never.
   */
  maxLagMs?: number;
  lagCheckEveryMs?: number;
  /** A monotonic clock in ms (tests). */
  monotonicMs?: () => number;
};

function sqlState(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : null;
}

export async function openReadReplica(options: OpenReadReplicaOptions): Promise<ReadReplica> {
  const { replicaUrl, primary, onFallback = () => {}, ...poolOptions } = options;
  const logger = options.logger ?? consoleLogger;
  const retryAfterMs = options.retryAfterMs ?? DEFAULT_REPLICA_RETRY_AFTER_MS;
  const now = options.monotonicMs ?? (() => performance.now());
  // A pool over the standby; never migrated (the standby replays the primary's migrations).
  const replica = await createDatabase({ ...poolOptions, databaseUrl: replicaUrl });

  /** Reads skip the replica until then. */
  let skipUntil = Number.NEGATIVE_INFINITY;
  /** A read is trying the replica after the breaker opened; the others wait for its outcome on the primary. */
  let probing = false;
  let open = false;

  const fallback = <Row>(
    sql: string,
    params: readonly unknown[] | undefined,
    reason: ReadFallbackReason = "replica_error",
  ): Promise<Row[]> => {
    onFallback(reason);
    return primary.query<Row>(sql, params);
  };

  const maxLagMs = options.maxLagMs ?? 0;
  const lag =
    maxLagMs > 0
      ? watchReplicaLag({
          measure: () => replicationLagSeconds(replica, primary),
          windowMs: maxLagMs,
          checkEveryMs: options.lagCheckEveryMs ?? lagCheckInterval(maxLagMs),
          monotonicMs: now,
          onChange: (state: ReplicaLagState) => {
            if (state.behind) {
              logger.warn(
                { lag_ms: Math.round(state.lagMs), window_ms: maxLagMs },
                "the read replica is further behind than the read-your-writes window: reads go to the primary",
              );
            } else {
              logger.info({}, "the read replica has caught up: reads go to it");
            }
          },
        })
      : null;

  return {
    async query<Row>(sql: string, params?: readonly unknown[]) {
      const bypassing = now() < skipUntil;
      if (bypassing || (open && probing)) return fallback<Row>(sql, params);
      if (lag && !open && (await lag.check()).behind) return fallback<Row>(sql, params, "replica_behind");
      const probe = open;
      if (probe) probing = true;
      try {
        const rows = await replica.query<Row>(sql, params);
        if (open) {
          open = false;
          logger.info({}, "the read replica answers again: reads go to it");
        }
        return rows;
      } catch (error) {
        const reason = unavailableReason(error);
        if (reason !== null && reason !== "read_only") {
          if (!open) {
            logger.warn(
              { reason, retry_after_ms: retryAfterMs },
              "the read replica is unreachable: reads go to the primary",
            );
          }
          open = true;
          skipUntil = now() + retryAfterMs;
        } else {
          // The SQLSTATE only: a driver's message may quote a parameter.
          logger.warn({ code: sqlState(error) }, "the read replica failed a read: it runs on the primary");
        }
        return fallback<Row>(sql, params);
      } finally {
        if (probe) probing = false;
      }
    },
    poolStats: () => replica.poolStats(),
    bypassed: () => open,
    behind: () => lag?.current().behind ?? false,
    lagSeconds: () => replicationLagSeconds(replica, primary),
    close: () => replica.close(),
  };
}
