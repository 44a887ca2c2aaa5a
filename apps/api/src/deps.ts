// Everything a procedure or page may use, built once by the composition root
// (app.ts) and handed down through the tRPC context: the bound use cases, not
// the database or the configuration.
import type { ApiKeyAuthenticator, Clock } from "@sms/domain";
import type { AuthThrottle } from "./http/auth-throttle.ts";
import type { AppLogger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";
import type { ApiServices } from "./services.ts";

export type AppDeps = {
  services: ApiServices;
  auth: ApiKeyAuthenticator;
  /** Failed authentications per address: a negative cache and a limit in front of the key lookup. */
  authThrottle: AuthThrottle;
  clock: Clock;
  logger: AppLogger;
  metrics: Metrics;
  /** True when the database answers within its deadline (GET /readyz). */
  databaseReachable(): Promise<boolean>;
  /** True once the instance is shutting down: /readyz answers 503 so a load balancer stops sending. */
  shuttingDown(): boolean;
};
