// The two external identity providers of the claim flow, behind one shape:
//
//   Google  OpenID Connect: discovery, authorization code + PKCE, `state` and
//           `nonce`; the ID token's signature (issuer's JWKS), issuer,
//           audience, expiry and nonce are verified by openid-client.
//   GitHub  OAuth 2.0 web flow: authorization code (+ PKCE, `state`) exchanged
//           at the token endpoint, then the REST API's /user for the stable
//           numeric id and /user/emails for the primary verified address.
//
// URLs, client ids and secrets come from configuration, so the same code
// talks to the real providers in production and to local fakes in tests.
// A provider without a client id and secret is not offered.
import * as oidc from "openid-client";

export type ProviderId = "google" | "github";

export type VerifiedIdentity = {
  provider: ProviderId;
  subject: string;
  email: string | null;
  name: string | null;
};

export type SignInStart = { url: URL; state: string; nonce: string | null; codeVerifier: string };

export type SignInFailure = {
  ok: false;
  /** rejected: the provider refused (bad or replayed code, bad token); unavailable: not reachable. */
  reason: "rejected" | "unavailable";
  /** A short, non-secret description for the log (an error class or OAuth error code). */
  detail: string;
};

export type SignInResult = { ok: true; identity: VerifiedIdentity } | SignInFailure;

export type IdentityProvider = {
  id: ProviderId;
  /** "Google", "GitHub". */
  label: string;
  /** Origins the browser is sent to for sign-in (for the CSP form-action). */
  authorizeOrigins(): string[];
  begin(options: { redirectUri: string }): Promise<SignInStart>;
  complete(options: {
    /** The callback URL as the provider called it (redirect URI + query). */
    callbackUrl: URL;
    state: string;
    nonce: string | null;
    codeVerifier: string;
  }): Promise<SignInResult>;
};

const HTTP_TIMEOUT_SECONDS = 10;

function isNetworkError(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current.name === "TimeoutError" || current.name === "AbortError") return true;
    if (current.name === "TypeError" && /fetch|network|connect|dns|socket/i.test(current.message))
      return true;
    if (
      /ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT/.test(String((current as { code?: unknown }).code ?? ""))
    )
      return true;
    current = current.cause;
  }
  return false;
}

function failure(error: unknown): SignInFailure {
  if (isNetworkError(error)) return { ok: false, reason: "unavailable", detail: "network" };
  if (error instanceof oidc.ResponseBodyError)
    return { ok: false, reason: "rejected", detail: `oauth:${error.error}` };
  const code = (error as { code?: unknown }).code;
  const name = error instanceof Error ? error.name : typeof error;
  return { ok: false, reason: "rejected", detail: typeof code === "string" ? `${name}:${code}` : name };
}

function pkce(): Promise<{ codeVerifier: string; codeChallenge: string }> {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  return oidc
    .calculatePKCECodeChallenge(codeVerifier)
    .then((codeChallenge) => ({ codeVerifier, codeChallenge }));
}

function insecure(url: string): boolean {
  // Plain HTTP only reaches here outside production (parseEnv refuses it there).
  return url.startsWith("http://");
}

function createGoogleProvider(options: {
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
}): IdentityProvider {
  let configuration: Promise<oidc.Configuration> | undefined;
  // Discovery happens on first use and is kept; a failure is retried next time.
  function discover(): Promise<oidc.Configuration> {
    configuration ??= oidc
      .discovery(new URL(options.issuerUrl), options.clientId, options.clientSecret, undefined, {
        // The ID token's signature is checked against the issuer's JWKS only
        // with the non-repudiation checks (openid-client otherwise relies on
        // the TLS channel to the token endpoint).
        execute: [
          oidc.enableNonRepudiationChecks,
          ...(insecure(options.issuerUrl) ? [oidc.allowInsecureRequests] : []),
        ],
        timeout: HTTP_TIMEOUT_SECONDS,
      })
      .then((config) => {
        config.timeout = HTTP_TIMEOUT_SECONDS;
        authorizeOrigin = new URL(config.serverMetadata().authorization_endpoint ?? options.issuerUrl).origin;
        return config;
      });
    configuration.catch(() => {
      configuration = undefined;
    });
    return configuration;
  }
  let authorizeOrigin: string | undefined;

  return {
    id: "google",
    label: "Google",
    authorizeOrigins: () => [
      ...new Set([new URL(options.issuerUrl).origin, ...(authorizeOrigin ? [authorizeOrigin] : [])]),
    ],
    async begin({ redirectUri }) {
      const config = await discover();
      const { codeVerifier, codeChallenge } = await pkce();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: "openid email profile",
        response_type: "code",
        state,
        nonce,
        code_challenge: codeChallenge,
        code_challenge_method: "S256",
        prompt: "select_account",
      });
      return { url, state, nonce, codeVerifier };
    },
    async complete({ callbackUrl, state, nonce, codeVerifier }) {
      try {
        const config = await discover();
        const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: codeVerifier,
          expectedState: state,
          expectedNonce: nonce ?? undefined,
          idTokenExpected: true,
        });
        const claims = tokens.claims();
        if (!claims || typeof claims.sub !== "string" || claims.sub === "") {
          return { ok: false, reason: "rejected", detail: "no_subject" };
        }
        // Only an address the provider has verified is worth keeping.
        const email =
          typeof claims.email === "string" && claims.email_verified === true ? claims.email : null;
        const name = typeof claims.name === "string" ? claims.name : null;
        return { ok: true, identity: { provider: "google", subject: claims.sub, email, name } };
      } catch (error) {
        return failure(error);
      }
    },
  };
}

type GitHubUser = { id?: unknown; login?: unknown; name?: unknown };
type GitHubEmail = { email?: unknown; primary?: unknown; verified?: unknown };

function createGitHubProvider(options: {
  authorizeUrl: string;
  tokenUrl: string;
  apiUrl: string;
  clientId: string;
  clientSecret: string;
}): IdentityProvider {
  // GitHub publishes no discovery document: its endpoints are configured.
  const config = new oidc.Configuration(
    {
      issuer: new URL(options.authorizeUrl).origin,
      authorization_endpoint: options.authorizeUrl,
      token_endpoint: options.tokenUrl,
    },
    options.clientId,
    options.clientSecret,
  );
  config.timeout = HTTP_TIMEOUT_SECONDS;
  if (insecure(options.tokenUrl)) oidc.allowInsecureRequests(config);

  async function api<T>(path: string, accessToken: string): Promise<T> {
    const response = await fetch(`${options.apiUrl}${path}`, {
      headers: {
        Accept: "application/vnd.github+json",
        Authorization: `Bearer ${accessToken}`,
        "User-Agent": "sms-api-claim",
        "X-GitHub-Api-Version": "2022-11-28",
      },
      signal: AbortSignal.timeout(HTTP_TIMEOUT_SECONDS * 1000),
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`GitHub API ${path} answered ${response.status}`);
    }
    return (await response.json()) as T;
  }

  return {
    id: "github",
    label: "GitHub",
    authorizeOrigins: () => [new URL(options.authorizeUrl).origin],
    async begin({ redirectUri }) {
      const { codeVerifier, codeChallenge } = await pkce();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: "read:user user:email",
        state,
        code_challenge: codeChallenge,
        code_challenge_method: "S256",
        allow_signup: "true",
      });
      return { url, state, nonce: null, codeVerifier };
    },
    async complete({ callbackUrl, state, codeVerifier }) {
      try {
        const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: codeVerifier,
          expectedState: state,
        });
        const user = await api<GitHubUser>("/user", tokens.access_token);
        // The numeric id is stable; the login can be renamed.
        const id = user.id;
        if (typeof id !== "number" || !Number.isSafeInteger(id) || id <= 0) {
          return { ok: false, reason: "rejected", detail: "no_user_id" };
        }
        const emails = await api<GitHubEmail[]>("/user/emails", tokens.access_token).catch(() => []);
        const primary = Array.isArray(emails)
          ? emails.find(
              (entry) => entry.primary === true && entry.verified === true && typeof entry.email === "string",
            )
          : undefined;
        const name =
          typeof user.name === "string" && user.name
            ? user.name
            : typeof user.login === "string"
              ? user.login
              : null;
        return {
          ok: true,
          identity: {
            provider: "github",
            subject: String(id),
            email: (primary?.email as string | undefined) ?? null,
            name,
          },
        };
      } catch (error) {
        return failure(error);
      }
    },
  };
}

/** The providers' settings (CLAIM_*, GOOGLE_*, GITHUB_*); null: not offered. */
export type IdentityProviderConfig = {
  google: { issuerUrl: string; clientId: string; clientSecret: string } | null;
  github: {
    authorizeUrl: string;
    tokenUrl: string;
    apiUrl: string;
    clientId: string;
    clientSecret: string;
  } | null;
};

/** The providers this configuration offers, in display order. */
export function identityProvidersFromConfig(claims: IdentityProviderConfig): IdentityProvider[] {
  const providers: IdentityProvider[] = [];
  if (claims.google) providers.push(createGoogleProvider(claims.google));
  if (claims.github) providers.push(createGitHubProvider(claims.github));
  return providers;
}
