// Everything a procedure, page or job may use, built once by the composition
// root (composition.ts) and handed down through the tRPC context.
import type { Database, PrismaClient } from "@sms/db";
import type { Keyring } from "@sms/crypto";
import type { ApiKeyAuthenticator, Clock, SmsProvider } from "@sms/domain";
import type { Env } from "./env.ts";
import type { AppLogger } from "./logger.ts";

export type AppDeps = {
  env: Env;
  db: Database;
  prisma: PrismaClient;
  clock: Clock;
  logger: AppLogger;
  keyring: Keyring;
  providers: { test: SmsProvider; live: SmsProvider | null };
  auth: ApiKeyAuthenticator;
};
