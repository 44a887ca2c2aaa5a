// The set-up every browser suite (claim, dashboard, console) shares: whether
// it can run; the Deno server on PostgreSQL and Chromium, started side by
// side, with the settings every browser suite needs; a Prisma handle on the
// server's database and the page kit; optionally the two local identity
// providers (fake Google and GitHub) and a fake uBill, the server configured
// for them.
import { createDatabase } from "@sms/db";
import { availableBackends, type PrismaDatabase, withPrisma } from "@sms/db/testing";
import { type FakeUbill, type FakeUbillBrand, startFakeUbill } from "@sms/provider-ubill/testing";
import type { Browser } from "playwright-core";
import { type FakeGitHub, type FakeGitHubUser, startFakeGitHub } from "../fakes/fake-github.ts";
import { type FakeGoogle, startFakeGoogle } from "../fakes/fake-google.ts";
import type { FakeUser } from "../fakes/fake-page.ts";
import { type ServerProcess, startServer } from "../harness.ts";
import { chromiumMissing, launchChromium } from "./browser.ts";
import { type PageKit, pageKit } from "./pages.ts";

/**
 * Whether a browser suite must be skipped: no Chromium (a failure in CI), or
 * no PostgreSQL (the suites move rows in the server's database).
 */
export async function browserSuiteUnavailable(what: string): Promise<boolean> {
  const noChromium = chromiumMissing();
  const noPostgres = !(await availableBackends()).includes("postgres");
  if (noPostgres && !noChromium) console.warn(`skipping ${what}: PostgreSQL is not available`);
  return noChromium || noPostgres;
}

/** GitHub's own example user, as both browser suites that sign in with GitHub use it. */
export const OCTOCAT: FakeGitHubUser = {
  id: 583231,
  login: "octocat",
  subject: "583231",
  email: "octocat@example.com",
  name: "The Octocat",
};

export type BrowserSuite = {
  server: ServerProcess;
  browser: Browser;
  db: PrismaDatabase;
  kit: PageKit;
  /** The identity providers, when asked for. */
  google?: FakeGoogle;
  github?: FakeGitHub;
  /** The fake uBill and the API key the server uses with it, when asked for. */
  ubill?: { fake: FakeUbill; apiKey: string };
  /** Closes the browser, the database handle, the server (and its database) and the providers. */
  close(): Promise<void>;
};

/**
 * Starts the server on PostgreSQL with `env` beside Chromium. With `identities`,
 * fake Google and GitHub serve those users first, the server is configured for
 * both, and both accept the server's claim callbacks.
 */
export async function startBrowserSuite(options: {
  /** Names the cookie secret. */
  name: string;
  env: Record<string, string>;
  identities?: { google: FakeUser[]; github: FakeGitHubUser[] };
  /** A fake uBill with these brands (the first is the default sender's). */
  ubill?: { brands: FakeUbillBrand[] };
}): Promise<BrowserSuite> {
  const { identities } = options;
  const ubillKey = `ubill-${options.name}-browser-secret-${crypto.randomUUID().slice(0, 8)}`;
  const ubill = options.ubill
    ? await startFakeUbill({ apiKey: ubillKey, brands: options.ubill.brands })
    : undefined;
  const ubillEnv: Record<string, string> = ubill
    ? {
        UBILL_BASE_URL: ubill.baseUrl,
        UBILL_API_KEY: ubillKey,
        UBILL_DEFAULT_BRAND_ID: String(options.ubill?.brands[0]?.id ?? 1),
      }
    : {};
  const [google, github] = identities
    ? await Promise.all([
        startFakeGoogle({ users: identities.google }),
        startFakeGitHub({ users: identities.github }),
      ])
    : [undefined, undefined];
  const providerEnv: Record<string, string> =
    google && github
      ? {
          GOOGLE_ISSUER_URL: google.issuerUrl,
          GOOGLE_CLIENT_ID: google.clientId,
          GOOGLE_CLIENT_SECRET: google.clientSecret,
          GITHUB_CLIENT_ID: github.clientId,
          GITHUB_CLIENT_SECRET: github.clientSecret,
          GITHUB_AUTHORIZE_URL: `${github.baseUrl}/login/oauth/authorize`,
          GITHUB_TOKEN_URL: `${github.baseUrl}/login/oauth/access_token`,
          GITHUB_API_URL: github.baseUrl,
        }
      : {};
  const [server, browser] = await Promise.all([
    startServer({
      backend: "postgres",
      env: {
        CLAIM_COOKIE_SECRET: `${options.name}-browser-test-cookie-secret-0123456789`,
        // Every browser here signs in from 127.0.0.1; the limit itself is tested in-process.
        CLAIM_SIGN_INS_PER_MINUTE: "1000",
        TEST_KEYS_PER_MINUTE: "100",
        SIMULATOR_DELIVERY_DELAY_MS: "0",
        ...providerEnv,
        ...ubillEnv,
        ...options.env,
      },
    }),
    launchChromium(),
  ]);
  google?.allowRedirectUri(`${server.baseUrl}/claim/callback/google`);
  github?.allowRedirectUri(`${server.baseUrl}/claim/callback/github`);
  const db = withPrisma(await createDatabase({ databaseUrl: server.databaseUrl, poolSize: 2 }));
  return {
    server,
    browser,
    db,
    kit: pageKit(server.baseUrl),
    ...(google ? { google } : {}),
    ...(github ? { github } : {}),
    ...(ubill ? { ubill: { fake: ubill, apiKey: ubillKey } } : {}),
    async close() {
      await browser.close();
      await db.close();
      await server.cleanup();
      await Promise.all([google?.stop(), github?.stop(), ubill?.close()]);
    },
  };
}
