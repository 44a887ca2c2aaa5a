// What the pages need from the app that mounts them: a small port. The app
// (apps/api, src/web-port.ts) implements it; this package never imports the
// app's files.
import type { Procedures, Viewer } from "@sms/contract";
import type { CookieSealer } from "@sms/crypto";
import type { Logger } from "@sms/domain";
import type { IdentityProvider } from "./kit/identity-providers.ts";

/** What the gateway hands a page for one request (its RequestState is wider). */
export type PageState = {
  requestId: string;
  /** The caller's address as the rate limits see it. */
  clientAddress: string;
  log: Logger;
  /** The project the request acted for, named in the access-log line. */
  projectId?: string;
};

export type WebPort<S extends PageState = PageState> = {
  config: {
    /** Where the service is reached ("https://sms.example"): cookies are Secure over https. */
    publicBaseUrl: string;
    /** The development identity provider (anyone signs in as anyone); never in production. */
    devSignIn: boolean;
    /** Free credits a claim adds. */
    freeCredits: number;
    /** The shared sender name, for projects without their own. */
    defaultSender: string;
    /** A live provider's brand list checks sender approvals (the brand id is then optional). */
    brandsConfigured: boolean;
    /** How many days the request log keeps a request (REQUEST_LOG_RETENTION_DAYS). */
    requestLogRetentionDays: number;
    /** The simulator's test numbers and what each does ("Send a test message"). */
    simulatorNumbers: ReadonlyArray<{ number: string; what: string }>;
  };
  clock: { now(): Date };
  logger: Logger;
  /** Seals every page cookie and makes the CSRF tokens (one secret). */
  sealer: CookieSealer;
  /** Google and GitHub, as configured (identityProvidersFromConfig). */
  identityProviders: IdentityProvider[];
  /** The procedures, called in-process for this request (and this session's viewer, if any). */
  procedures(state: S, viewer?: Viewer): Procedures;
  /**
   * A request body as text within `maxBytes`: null when larger, "too_slow"
   * when it does not arrive by the server's deadline.
   */
  readBody(request: Request, maxBytes: number): Promise<string | null | "too_slow">;
  /** The app's wording of a refused form field (the same sentence the procedures use). */
  invalidFieldText(field: "amount"): string;
  /** An unexpected error as the log writes it (no secrets). */
  serializeError(error: unknown): unknown;
};

/** A page route, as the app's gateway mounts it. */
export type PageRoute<S extends PageState = PageState> = {
  method: "GET" | "POST";
  path: `/${string}`;
  handle(request: Request, state: S, params: Record<string, string>): Promise<Response> | Response;
};

/** What the gateway answers under a page prefix when no page took the request. */
export type PageErrorRenderer = {
  prefix: `/${string}`;
  render(error: { code: string; status: number; message: string }, requestId: string): Promise<Response>;
};
