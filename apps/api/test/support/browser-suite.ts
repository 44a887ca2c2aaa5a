// The set-up every browser suite (claim, dashboard, console) shares: the Deno
// server on PostgreSQL and Chromium, started side by side, a Prisma handle on
// the server's database and the page kit; optionally the two local identity
// providers (fake Google and GitHub) with the server configured for them.
import { createDatabase } from "@sms/db";
import { type PrismaDatabase, withPrisma } from "@sms/db/testing";
import type { Browser } from "playwright-core";
import { type FakeGitHub, type FakeGitHubUser, startFakeGitHub } from "../fakes/fake-github.ts";
import { type FakeGoogle, startFakeGoogle } from "../fakes/fake-google.ts";
import type { FakeUser } from "../fakes/fake-page.ts";
import { type ServerProcess, startServer } from "../harness.ts";
import { launchChromium } from "./browser.ts";
import { type PageKit, pageKit } from "./pages.ts";

export type BrowserSuite = {
  server: ServerProcess;
  browser: Browser;
  db: PrismaDatabase;
  kit: PageKit;
  /** The identity providers, when asked for. */
  google?: FakeGoogle;
  github?: FakeGitHub;
  /** Closes the browser, the database handle, the server (and its database) and the providers. */
  close(): Promise<void>;
};

/**
 * Starts the server on PostgreSQL with `env` beside Chromium. With `identities`,
 * fake Google and GitHub serve those users first, the server is configured for
 * both, and both accept the server's claim callbacks.
 */
export async function startBrowserSuite(options: {
  env: Record<string, string>;
  identities?: { google: FakeUser[]; github: FakeGitHubUser[] };
}): Promise<BrowserSuite> {
  const { identities } = options;
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
    startServer({ backend: "postgres", env: { ...providerEnv, ...options.env } }),
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
    async close() {
      await browser.close();
      await db.close();
      await server.cleanup();
      await Promise.all([google?.stop(), github?.stop()]);
    },
  };
}
