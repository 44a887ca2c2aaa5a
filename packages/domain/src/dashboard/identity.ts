// Who is signed in to the dashboard: an identity from an identity provider
// (Google, GitHub) or, outside production, the development provider, where a
// developer types a name. Operators are identities listed in configuration.

/** A verified (or, for "dev", declared) identity. */
export type DashboardIdentity = {
  /** "google", "github" or "dev". */
  provider: string;
  subject: string;
  name: string | null;
};

/** A typed development name: letters (any script), digits, spaces and . _ ' -, 1 to 40 characters. */
export const DEV_NAME_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N} ._'-]{0,39}$/u;

/**
 * The development provider's identity for a typed name: the subject is the
 * name's slug ("Alice Example" → "alice-example"), so the same name signs in
 * as the same account again. null when the name is not acceptable.
 */
export function developmentIdentity(typed: string): DashboardIdentity | null {
  const name = typed.trim().replace(/\s+/g, " ");
  if (!DEV_NAME_PATTERN.test(name)) return null;
  const subject = name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (subject === "") return null;
  return { provider: "dev", subject, name };
}

/** The audit log's actor for an identity: `provider:subject`. */
export function actorOf(identity: Pick<DashboardIdentity, "provider" | "subject">): string {
  return `${identity.provider}:${identity.subject}`;
}

/** `provider:subject`, as OPERATOR_IDENTITIES lists operators. */
export const OPERATOR_IDENTITY_PATTERN = /^(google|github|dev):[A-Za-z0-9._@+-]{1,100}$/;

export function isOperator(
  identity: Pick<DashboardIdentity, "provider" | "subject">,
  operatorIdentities: readonly string[],
): boolean {
  return operatorIdentities.includes(actorOf(identity));
}
