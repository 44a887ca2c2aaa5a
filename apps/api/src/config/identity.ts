// The identity providers (Google, GitHub and the development one), the claim
// flow they sign in to, the operators among their identities, and the
// dashboard's sessions.
import { OPERATOR_IDENTITY_PATTERN } from "@sms/domain";
import { z } from "zod";
import type { TServiceEnv } from "./service.ts";
import {
  commaList,
  fail,
  HOUR_MS,
  int,
  MINUTE_MS,
  optionalString,
  optionalUrl,
  requiredInProduction,
  secret32,
  together,
} from "./shared.ts";

export const ZIdentityEnv = z.object({
  CLAIM_FREE_CREDITS: int(50, 0),
  CLAIM_SIGN_INS_PER_MINUTE: int(20, 1),
  CLAIM_COOKIE_SECRET: secret32("must be at least 32 characters"),
  GOOGLE_ISSUER_URL: optionalUrl,
  GOOGLE_CLIENT_ID: optionalString,
  GOOGLE_CLIENT_SECRET: optionalString,
  GITHUB_CLIENT_ID: optionalString,
  GITHUB_CLIENT_SECRET: optionalString,
  GITHUB_AUTHORIZE_URL: optionalUrl,
  GITHUB_TOKEN_URL: optionalUrl,
  GITHUB_API_URL: optionalUrl,
  /** "auto": on outside production when neither Google nor GitHub is configured. */
  DEV_SIGN_IN: z.enum(["auto", "true", "false"]).default("auto"),
  /** Comma-separated `provider:subject` identities that also see the operator's views. */
  OPERATOR_IDENTITIES: optionalString,
  DASHBOARD_SESSION_IDLE_MINUTES: int(720, 5, 7 * 24 * 60),
  DASHBOARD_SESSION_MAX_HOURS: int(168, 1, 90 * 24),
});
export type TIdentityEnv = z.output<typeof ZIdentityEnv>;

/** The providers' URLs, the real providers' by default; https:// only in production. */
function providerUrls(env: TIdentityEnv, production: boolean) {
  const urls = {
    GOOGLE_ISSUER_URL: env.GOOGLE_ISSUER_URL ?? "https://accounts.google.com",
    GITHUB_AUTHORIZE_URL: env.GITHUB_AUTHORIZE_URL ?? "https://github.com/login/oauth/authorize",
    GITHUB_TOKEN_URL: env.GITHUB_TOKEN_URL ?? "https://github.com/login/oauth/access_token",
    GITHUB_API_URL: (env.GITHUB_API_URL ?? "https://api.github.com").replace(/\/+$/, ""),
  };
  if (production) {
    // Sign-in traffic carries codes and tokens: never over plain HTTP in production.
    const insecure = Object.entries(urls).find(([, value]) => !value.startsWith("https://"));
    if (insecure) fail(`${insecure[0]} must be an https:// URL when NODE_ENV=production`);
  }
  return urls;
}

function operatorIdentitiesOf(env: TIdentityEnv, production: boolean): string[] {
  const identities = commaList(env.OPERATOR_IDENTITIES);
  if (identities.some((entry) => !OPERATOR_IDENTITY_PATTERN.test(entry)))
    fail("OPERATOR_IDENTITIES must list provider:subject entries (google:…, github:…, dev:…)");
  if (production && identities.some((entry) => entry.startsWith("dev:")))
    fail("OPERATOR_IDENTITIES cannot name dev: identities when NODE_ENV=production");
  return identities;
}

export function identityConfig(env: TIdentityEnv & Pick<TServiceEnv, "NODE_ENV">) {
  const production = env.NODE_ENV === "production";
  requiredInProduction(production, "CLAIM_COOKIE_SECRET", env.CLAIM_COOKIE_SECRET);
  const google = together(
    "GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET",
    env.GOOGLE_CLIENT_ID,
    env.GOOGLE_CLIENT_SECRET,
  );
  const github = together(
    "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET",
    env.GITHUB_CLIENT_ID,
    env.GITHUB_CLIENT_SECRET,
  );
  const urls = providerUrls(env, production);
  // The development provider lets anyone sign in as anyone: never in production.
  if (production && env.DEV_SIGN_IN === "true") fail("DEV_SIGN_IN cannot be true when NODE_ENV=production");
  return {
    claims: {
      freeCredits: env.CLAIM_FREE_CREDITS,
      signInsPerMinute: env.CLAIM_SIGN_INS_PER_MINUTE,
      /** undefined outside production: a throw-away secret is generated (app.ts, developmentSecret). */
      cookieSecret: env.CLAIM_COOKIE_SECRET,
      google: google && { issuerUrl: urls.GOOGLE_ISSUER_URL, clientId: google[0], clientSecret: google[1] },
      github: github && {
        authorizeUrl: urls.GITHUB_AUTHORIZE_URL,
        tokenUrl: urls.GITHUB_TOKEN_URL,
        apiUrl: urls.GITHUB_API_URL,
        clientId: github[0],
        clientSecret: github[1],
      },
    },
    dashboard: {
      /** The development identity provider ("Sign in as a local developer"); never in production. */
      devSignIn:
        env.DEV_SIGN_IN === "true" || (env.DEV_SIGN_IN === "auto" && !production && !google && !github),
      /** `provider:subject` of every operator (OPERATOR_IDENTITIES). */
      operatorIdentities: operatorIdentitiesOf(env, production),
      sessionIdleMs: env.DASHBOARD_SESSION_IDLE_MINUTES * MINUTE_MS,
      sessionMaxMs: env.DASHBOARD_SESSION_MAX_HOURS * HOUR_MS,
    },
  };
}
