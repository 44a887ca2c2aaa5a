// A local stand-in for GitHub's OAuth 2.0 web flow and the two REST endpoints
// the claim flow reads, speaking GitHub's wire format on loopback:
//
//   GET  /login/oauth/authorize      account chooser; "Continue as …" redirects
//                                    to redirect_uri with code and state,
//                                    "Cancel" with error=access_denied
//   POST /login/oauth/access_token   code → access token (client secret,
//                                    redirect_uri and PKCE checked; a code works
//                                    once and for 10 minutes). Like GitHub, a
//                                    bad code is HTTP 200 with an `error` field.
//   GET  /user                       { id, login, name, email }
//   GET  /user/emails                [{ email, primary, verified, visibility }]
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { consentPage, type FakeUser } from "./fake-page.ts";

export type FakeGitHubUser = FakeUser & { id: number; login: string };

export type FakeGitHub = {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  allowRedirectUri(uri: string): void;
  tokenRequests: { ok: number; refused: number };
  stop(): Promise<void>;
};

type Grant = {
  user: FakeGitHubUser;
  redirectUri: string;
  codeChallenge: string | null;
  expiresAt: number;
  used: boolean;
};

const CODE_LIFETIME_MS = 10 * 60_000;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
}

export async function startFakeGitHub(options: {
  users: FakeGitHubUser[];
  clientId?: string;
  clientSecret?: string;
}): Promise<FakeGitHub> {
  const clientId = options.clientId ?? "Iv1.fakegithubclient";
  const clientSecret = options.clientSecret ?? "fake-github-secret";
  const redirectUris = new Set<string>();
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, FakeGitHubUser>();
  const tokenRequests = { ok: 0, refused: 0 };

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://fake-github");
      const query = Object.fromEntries(url.searchParams);
      if (req.method === "GET" && url.pathname === "/login/oauth/authorize") {
        if (query.client_id !== clientId) return json(res, 404, { message: "Not Found" });
        if (!query.redirect_uri || !redirectUris.has(query.redirect_uri)) {
          res.writeHead(400, { "Content-Type": "text/plain" });
          return res.end("The redirect_uri is not associated with this application.");
        }
        const redirect = new URL(query.redirect_uri);
        if (url.searchParams.has("decision")) {
          if (query.decision === "cancel") {
            redirect.searchParams.set("error", "access_denied");
            redirect.searchParams.set("error_description", "The user has denied your application access.");
            redirect.searchParams.set(
              "error_uri",
              "https://docs.github.com/apps/troubleshooting-authorization-request-errors/#access-denied",
            );
          } else {
            const user = options.users.find((candidate) => candidate.subject === query.login_hint);
            if (!user) return json(res, 400, { message: "unknown user" });
            const code = randomBytes(10).toString("hex");
            grants.set(code, {
              user,
              redirectUri: query.redirect_uri,
              codeChallenge: query.code_challenge_method === "S256" ? (query.code_challenge ?? null) : null,
              expiresAt: Date.now() + CODE_LIFETIME_MS,
              used: false,
            });
            redirect.searchParams.set("code", code);
          }
          if (query.state) redirect.searchParams.set("state", query.state);
          res.writeHead(302, { Location: redirect.href });
          return res.end();
        }
        const fields = { ...query, decision: "approve" };
        res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
        return res.end(
          consentPage({
            provider: "GitHub",
            clientId,
            users: options.users,
            approve: { action: "/login/oauth/authorize", fields },
            cancel: { action: "/login/oauth/authorize", fields: { ...query, decision: "cancel" } },
          }),
        );
      }

      if (req.method === "POST" && url.pathname === "/login/oauth/access_token") {
        const text = await readBody(req);
        const type = req.headers["content-type"] ?? "";
        const body: Record<string, string> = type.includes("json")
          ? JSON.parse(text)
          : Object.fromEntries(new URLSearchParams(text));
        let id = body.client_id;
        let secret = body.client_secret;
        const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "");
        if (basic?.[1]) {
          const [user, pass] = Buffer.from(basic[1], "base64").toString("utf8").split(":");
          id = decodeURIComponent(user ?? "");
          secret = decodeURIComponent(pass ?? "");
        }
        const refuse = (error: string, description: string) => {
          tokenRequests.refused++;
          // GitHub answers OAuth errors with 200 and an error body.
          return json(res, 200, {
            error,
            error_description: description,
            error_uri: "https://docs.github.com/",
          });
        };
        if (id !== clientId || secret !== clientSecret)
          return refuse(
            "incorrect_client_credentials",
            "The client_id and/or client_secret passed are incorrect.",
          );
        const grant = body.code ? grants.get(body.code) : undefined;
        if (!grant || grant.used || grant.expiresAt < Date.now()) {
          return refuse("bad_verification_code", "The code passed is incorrect or expired.");
        }
        grant.used = true;
        if (body.redirect_uri && body.redirect_uri !== grant.redirectUri) {
          return refuse(
            "redirect_uri_mismatch",
            "The redirect_uri MUST match the registered callback URL for this application.",
          );
        }
        if (grant.codeChallenge) {
          const expected = createHash("sha256")
            .update(body.code_verifier ?? "")
            .digest("base64url");
          if (expected !== grant.codeChallenge)
            return refuse("invalid_grant", "The code_verifier does not match the code_challenge.");
        }
        const accessToken = `gho_${randomBytes(18).toString("hex")}`;
        tokens.set(accessToken, grant.user);
        tokenRequests.ok++;
        if (!(req.headers.accept ?? "").includes("json")) {
          res.writeHead(200, { "Content-Type": "application/x-www-form-urlencoded" });
          return res.end(
            new URLSearchParams({
              access_token: accessToken,
              scope: "read:user,user:email",
              token_type: "bearer",
            }).toString(),
          );
        }
        return json(res, 200, {
          access_token: accessToken,
          token_type: "bearer",
          scope: "read:user,user:email",
        });
      }

      if (req.method === "GET" && (url.pathname === "/user" || url.pathname === "/user/emails")) {
        const auth = /^(?:Bearer|token) (.+)$/i.exec(req.headers.authorization ?? "");
        const user = auth?.[1] ? tokens.get(auth[1]) : undefined;
        if (!user)
          return json(res, 401, {
            message: "Requires authentication",
            documentation_url: "https://docs.github.com/rest",
          });
        if (!req.headers["user-agent"])
          return json(res, 403, { message: "Request forbidden: a User-Agent header is required" });
        if (url.pathname === "/user")
          return json(res, 200, { login: user.login, id: user.id, name: user.name, email: null });
        return json(res, 200, [
          {
            email: `${user.login}@users.noreply.github.com`,
            primary: false,
            verified: true,
            visibility: null,
          },
          { email: user.email, primary: true, verified: true, visibility: "private" },
        ]);
      }
      json(res, 404, { message: "Not Found" });
    } catch (error) {
      json(res, 500, { message: (error as Error).message });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    clientId,
    clientSecret,
    allowRedirectUri: (uri) => redirectUris.add(uri),
    tokenRequests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
