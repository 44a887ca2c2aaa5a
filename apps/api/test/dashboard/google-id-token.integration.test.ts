// issue 25 L1: the Google provider verifies the ID token's RS256 signature
// against the issuer's JWKS (openid-client's non-repudiation checks): a token
// whose signature has one bit flipped is refused, though its header, issuer,
// audience, nonce and expiry are all right. Against the local fake Google.
import { type IdentityProvider, identityProvidersFromConfig } from "@sms/web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeGoogle, startFakeGoogle } from "../fakes/fake-google.ts";

const ALICE = { subject: "google-alice", email: "alice@example.com", name: "Alice" };
const REDIRECT_URI = "http://api.test/claim/callback/google";

describe("Google sign-in (the provider, against the fake Google)", () => {
  let fake: FakeGoogle;
  let google: IdentityProvider;

  beforeAll(async () => {
    fake = await startFakeGoogle({ users: [ALICE] });
    fake.allowRedirectUri(REDIRECT_URI);
    const [provider] = identityProvidersFromConfig({
      google: { issuerUrl: fake.issuerUrl, clientId: fake.clientId, clientSecret: fake.clientSecret },
      github: null,
    });
    google = provider!;
  });
  afterAll(() => fake?.stop());

  /** A whole sign-in as Alice: begin, the provider's authorization (code), then complete. */
  async function signIn() {
    const start = await google.begin({ redirectUri: REDIRECT_URI });
    const authorize = new URL(start.url);
    authorize.pathname = "/authorize";
    authorize.searchParams.set("login_hint", ALICE.subject);
    const answer = await fetch(authorize, { redirect: "manual" });
    const location = answer.headers.get("location");
    expect(location).toMatch(/^http:\/\/api\.test\/claim\/callback\/google\?/);
    return google.complete({
      callbackUrl: new URL(location!),
      state: start.state,
      nonce: start.nonce,
      codeVerifier: start.codeVerifier,
    });
  }

  it("signs in with a genuine ID token", async () => {
    fake.tamperIdTokenSignature = false;
    expect(await signIn()).toEqual({
      ok: true,
      identity: { provider: "google", subject: ALICE.subject, email: ALICE.email, name: ALICE.name },
    });
  });

  it("refuses an ID token whose RS256 signature has one bit flipped", async () => {
    fake.tamperIdTokenSignature = true;
    try {
      const result = await signIn();
      expect(result).toMatchObject({ ok: false, reason: "rejected" });
    } finally {
      fake.tamperIdTokenSignature = false;
    }
    // The fake did answer the code exchange: the refusal is the client's.
    expect(fake.tokenRequests.ok).toBe(2);
  });
});
