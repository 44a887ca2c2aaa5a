// A local OpenID Connect provider standing in for Google: oauth2-mock-server
// (discovery, JWKS, RS256-signed ID tokens, PKCE) on loopback, with
//   - an account chooser at /consent (advertised as the authorization
//     endpoint) whose "Continue as …" goes on to the mock's /authorize and
//     whose "Cancel" returns error=access_denied, as Google does;
//   - redirect URIs checked against a registered list;
//   - the chosen user's sub, email and name in the ID token, plus the nonce
//     of the authorization request (the mock carries it over by code);
//   - the client secret checked at the token endpoint.
// A code can be redeemed once: its PKCE challenge is forgotten on first use.
// `tamperIdTokenSignature` flips one bit of the next ID tokens' RS256
// signature (the header and claims stay valid): a client must refuse them.
import type { ServerResponse } from "node:http";
import { Events, OAuth2Server } from "oauth2-mock-server";
import { consentPage, type FakeUser } from "./fake-page.ts";

export type FakeGoogle = {
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
  /** Registers a redirect URI (the API's callback) once its port is known. */
  allowRedirectUri(uri: string): void;
  /** Token endpoint calls: accepted and refused. */
  tokenRequests: { ok: number; refused: number };
  /** While true, every ID token issued carries a signature with one bit flipped. */
  tamperIdTokenSignature: boolean;
  stop(): Promise<void>;
};

function send(res: ServerResponse, status: number, body: string, type = "text/html; charset=utf-8"): void {
  res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
  res.end(body);
}

export async function startFakeGoogle(options: {
  users: FakeUser[];
  clientId?: string;
  clientSecret?: string;
}): Promise<FakeGoogle> {
  const clientId = options.clientId ?? "fake-google-client.apps.example";
  const clientSecret = options.clientSecret ?? "fake-google-secret";
  const redirectUris = new Set<string>();
  const userByCode = new Map<string, FakeUser>();
  const tokenRequests = { ok: 0, refused: 0 };

  const server = new OAuth2Server();
  await server.issuer.keys.generate("RS256");
  await server.start(0, "127.0.0.1");
  // The mock names itself "localhost"; pin the address everyone must use.
  const issuerUrl = `http://127.0.0.1:${server.address().port}`;
  server.issuer.url = issuerUrl;
  const { service } = server;

  service.on(
    Events.BeforeWellKnownOpenIdConfiguration,
    (response: { body: Record<string, unknown> | "" }) => {
      if (typeof response.body === "object") {
        Object.assign(response.body, {
          authorization_endpoint: `${issuerUrl}/consent`,
          token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
        });
      }
    },
  );

  service.addRoute("GET", "/consent", (req, res) => {
    const query = Object.fromEntries(
      Object.entries(req.query).flatMap(([key, value]) => (typeof value === "string" ? [[key, value]] : [])),
    );
    if (query.client_id !== clientId) return send(res, 400, "invalid_client: unknown client_id");
    if (!query.redirect_uri || !redirectUris.has(query.redirect_uri)) {
      return send(res, 400, "redirect_uri_mismatch: the redirect URI is not registered for this client");
    }
    if (
      query.response_type !== "code" ||
      query.code_challenge_method !== "S256" ||
      !query.nonce ||
      !query.state
    ) {
      return send(res, 400, "invalid_request: code flow with S256 PKCE, state and nonce expected");
    }
    return send(
      res,
      200,
      consentPage({
        provider: "Google",
        clientId,
        users: options.users,
        approve: { action: "/authorize", fields: query },
        cancel: { action: query.redirect_uri, fields: { error: "access_denied", state: query.state } },
      }),
    );
  });

  service.on(
    Events.BeforeAuthorizeRedirect,
    (redirect: { url: URL }, req: { query?: Record<string, unknown> }) => {
      const code = redirect.url.searchParams.get("code");
      const user = options.users.find((candidate) => candidate.subject === req.query?.login_hint);
      if (code && user) userByCode.set(code, user);
    },
  );

  service.on(
    Events.BeforeTokenSigning,
    (token: { payload: Record<string, unknown> }, req: { body?: { code?: unknown } }) => {
      const user = typeof req.body?.code === "string" ? userByCode.get(req.body.code) : undefined;
      if (user)
        Object.assign(token.payload, {
          sub: user.subject,
          email: user.email,
          email_verified: true,
          name: user.name,
        });
    },
  );

  service.on(
    Events.BeforeResponse,
    (
      response: { body: Record<string, unknown> | ""; statusCode: number },
      req: { body?: Record<string, unknown> },
    ) => {
      if (req.body?.client_id !== clientId || req.body?.client_secret !== clientSecret) {
        response.statusCode = 401;
        response.body = { error: "invalid_client" };
        tokenRequests.refused++;
        return;
      }
      tokenRequests.ok++;
      const idToken = typeof response.body === "object" ? response.body.id_token : undefined;
      if (fake.tamperIdTokenSignature && typeof idToken === "string" && typeof response.body === "object") {
        response.body.id_token = flipSignatureBit(idToken);
      }
    },
  );

  const fake: FakeGoogle = {
    issuerUrl,
    clientId,
    clientSecret,
    allowRedirectUri: (uri) => redirectUris.add(uri),
    tokenRequests,
    tamperIdTokenSignature: false,
    stop: () => server.stop(),
  };
  return fake;
}

/** The JWT with one bit of its signature flipped (in the middle, so base64url padding bits are not the ones changed). */
function flipSignatureBit(jwt: string): string {
  const [header, payload, signature = ""] = jwt.split(".");
  const bytes = Buffer.from(signature, "base64url");
  const index = Math.floor(bytes.length / 2);
  bytes[index] = (bytes[index] ?? 0) ^ 0x01;
  return `${header}.${payload}.${bytes.toString("base64url")}`;
}
