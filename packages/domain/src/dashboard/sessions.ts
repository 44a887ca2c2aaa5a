// Dashboard sessions, kept server-side (store/sessions.ts): the browser holds
// a random token, the database its SHA-256 hash. A session slides: every use
// moves its idle expiry forward (config.idleMs), never past its absolute
// expiry (config.maxMs). An operator's session is shorter (at most an hour
// idle, 12 hours in all). Signing out deletes the row, so a copied cookie
// stops working too; signing out everywhere deletes every row of the account.
import { newId, randomToken, sha256Hex } from "@sms/crypto";
import type { Clock } from "../ports.ts";
import { inBatches } from "../in-batches.ts";
import type { Store } from "../store/index.ts";
import { actorOf, type DashboardIdentity, isOperator } from "./identity.ts";

export type SessionConfig = {
  /** A session unused this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, however much it is used. */
  maxMs: number;
  /** `provider:subject` of every operator. */
  operatorIdentities: readonly string[];
};

/** An operator's session ends after this long unused (or the configured idle time, if shorter). */
export const OPERATOR_SESSION_IDLE_MS = 60 * 60_000;
/** An operator's session ends this long after sign-in (or the configured maximum, if shorter). */
export const OPERATOR_SESSION_MAX_MS = 12 * 60 * 60_000;

/** The idle and absolute lifetimes of `identity`'s sessions. */
function lifetimes(config: SessionConfig, identity: Pick<DashboardIdentity, "provider" | "subject">) {
  if (!isOperator(identity, config.operatorIdentities)) return { idleMs: config.idleMs, maxMs: config.maxMs };
  return {
    idleMs: Math.min(config.idleMs, OPERATOR_SESSION_IDLE_MS),
    maxMs: Math.min(config.maxMs, OPERATOR_SESSION_MAX_MS),
  };
}

export type SessionDeps = { store: Pick<Store, "sessions">; clock: Clock; config: SessionConfig };

/** Who a live session belongs to, as every dashboard page and procedure sees it. */
export type DashboardViewer = {
  sessionId: string;
  identity: DashboardIdentity;
  /** The audit log's actor: `provider:subject`. */
  actor: string;
  /** The identity's account; null until it claims a project. */
  accountId: string | null;
  operator: boolean;
  expiresAt: Date;
};

export type StartedSession = { ok: true; token: string; sessionId: string; expiresAt: Date };

export async function startSession(
  deps: SessionDeps,
  input: { identity: DashboardIdentity },
): Promise<StartedSession> {
  const now = deps.clock.now();
  const token = randomToken(32);
  const sessionId = newId("dss", now.getTime());
  const { idleMs, maxMs } = lifetimes(deps.config, input.identity);
  const expiresAt = new Date(now.getTime() + maxMs);
  await deps.store.sessions.create({
    id: sessionId,
    tokenHash: await sha256Hex(token),
    provider: input.identity.provider,
    subject: input.identity.subject,
    name: input.identity.name,
    now,
    idleExpiresAt: new Date(Math.min(now.getTime() + idleMs, expiresAt.getTime())),
    expiresAt,
  });
  return { ok: true, token, sessionId, expiresAt };
}

export type ResumeSessionResult = { ok: true; viewer: DashboardViewer } | { ok: false; code: "no_session" };

/** The session of `token`, renewed; `no_session` when it is unknown, signed out or expired. */
export async function resumeSession(
  deps: SessionDeps,
  input: { token: string },
): Promise<ResumeSessionResult> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(input.token)) return { ok: false, code: "no_session" };
  const now = deps.clock.now();
  const record = await deps.store.sessions.resume(
    await sha256Hex(input.token),
    now,
    new Date(now.getTime() + deps.config.idleMs),
    {
      identities: deps.config.operatorIdentities,
      idleExpiresAt: new Date(now.getTime() + Math.min(deps.config.idleMs, OPERATOR_SESSION_IDLE_MS)),
    },
  );
  if (!record) return { ok: false, code: "no_session" };
  const identity = { provider: record.provider, subject: record.subject, name: record.name };
  return {
    ok: true,
    viewer: {
      sessionId: record.id,
      identity,
      actor: actorOf(identity),
      accountId: record.accountId,
      operator: isOperator(identity, deps.config.operatorIdentities),
      expiresAt: record.expiresAt,
    },
  };
}

/** Sign-out: the session ends everywhere. */
export async function endSession(
  deps: { store: Pick<Store, "sessions"> },
  input: { token: string },
): Promise<{ ok: true; ended: boolean }> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(input.token)) return { ok: true, ended: false };
  return { ok: true, ended: await deps.store.sessions.delete(await sha256Hex(input.token)) };
}

/** "Sign out everywhere": every session of the viewer's identity and of its account's other identities ends. */
export async function endAllSessions(
  deps: { store: Pick<Store, "sessions"> },
  input: { viewer: Pick<DashboardViewer, "identity" | "accountId"> },
): Promise<{ ok: true; ended: number }> {
  return {
    ok: true,
    ended: await deps.store.sessions.deleteAll(input.viewer.identity, input.viewer.accountId),
  };
}

/** The periodic purge of sessions past their idle expiry, in batches. */
export async function purgeDashboardSessions(
  deps: { store: Pick<Store, "sessions"> },
  input: { now: Date; batchSize: number },
): Promise<{ purged: number }> {
  return {
    purged: await inBatches(input.batchSize, () =>
      deps.store.sessions.purgeExpired(input.now, input.batchSize),
    ),
  };
}
