// @sms/web/testing: what tests outside this package need to forge or read the
// pages' cookies (the claim flow's sign-in and identity cookies).
export { cookieNames, type SignedInIdentity, type SignInTransaction } from "./kit/cookies.ts";
/** The pages' HTML tag, for test fakes that serve a page of their own (the fake identity providers). */
export { html } from "./kit/html.ts";
