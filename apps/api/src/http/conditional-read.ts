// Conditional reads and holds: status without busy polling (issue 54, item 4;
// an extension: the contract's §6 has callers poll, and its answers without
// the headers below are unchanged but for the ETag header).
//
//   ETag           every 200 of a route whose meta has `conditional`: a strong
//                  tag of the body's bytes (two answers with the same tag are
//                  byte for byte the same JSON).
//   If-None-Match  a tag that matches the current one answers 304, no body,
//                  with the ETag (and X-Request-Id, as every answer).
//   Prefer: wait=N with If-None-Match (RFC 7240): the request is held until
//                  the state changes (200, the new state) or N seconds pass
//                  (304); N above MAX_WAIT_SECONDS is clamped to it. Both
//                  answers say `Preference-Applied: wait=<the N used>`. A hold
//                  the instance cannot take (its WaitingRoom is full, for the
//                  instance or the API key, or it is shutting down) is not an
//                  error: the request is answered at once, as without Prefer,
//                  and without Preference-Applied; the clients then poll on
//                  the contract's schedule.
//
// What wakes a hold: the store's notifications (ResourceChanges: PostgreSQL
// LISTEN/NOTIFY, one session per instance, whichever instance made the change),
// or, where there are none (PGlite, or the session down), a re-read every
// POLL_INTERVAL_MS; and the one change no statement makes, a pending
// verification reaching its expires_at. A wake is only a reason to read again:
// the answer is whatever the procedure reads, compared by its tag.
import { MAX_WAIT_SECONDS } from "@sms/contract";
import { sha256HexSync } from "@sms/crypto";
import type { ResourceChanges } from "@sms/domain";
import type { RequestState } from "../trpc/request-state.ts";

/** The longest hold a caller can ask for (RFC 7240 `wait`); more is clamped to it. */
/** Without notifications (PGlite), how often a hold reads again. */
export const POLL_INTERVAL_MS = 1000;

/** A procedure's answer before it is a Response: what the tag is made of. */
export type ProcedureAnswer = {
  status: number;
  headers: Record<string, string>;
  /** The JSON text sent. */
  body: string;
  /** The procedure's output, before JSON. */
  data: unknown;
};

/**
 * The answer's strong entity tag: 128 bits of SHA-256 of the JSON sent. Strong
 * because it is the bytes: equal tags, equal bodies (RFC 9110 §8.8.1). It
 * follows what a caller can see and nothing else (a row rewritten with the same
 * state keeps its tag).
 */
export function entityTag(body: string): string {
  return `"${sha256HexSync(body).slice(0, 32)}"`;
}

/**
 * RFC 9110 §13.1.2: `*`, or a list of tags one of which matches `tag` by the
 * weak comparison (`W/"x"` matches `"x"`).
 */
export function ifNoneMatchMatches(header: string | null, tag: string): boolean {
  if (header === null) return false;
  const trimmed = header.trim();
  if (trimmed === "*") return true;
  const opaque = tag.replace(/^W\//, "");
  for (const match of trimmed.matchAll(/(?:W\/)?"[^"]*"/g)) {
    if (match[0].replace(/^W\//, "") === opaque) return true;
  }
  return false;
}

/**
 * The seconds a `Prefer` header's `wait` asks for (RFC 7240 §4.3: delta-seconds,
 * the first `wait` when there are several), unclamped; null when it names none
 * or an unreadable one.
 */
export function preferredWait(header: string | null): number | null {
  if (header === null) return null;
  for (const preference of header.split(",")) {
    const [token] = preference.split(";");
    const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*$/i.exec(token ?? "");
    if (match) return Number(match[1]);
    if (/^\s*wait\s*(=|$)/i.test(token ?? "")) return null;
  }
  return null;
}

/**
 * The holds an instance takes at once: at most `max` (its share of
 * MAX_CONNECTIONS: a held request keeps its connection) and `perKey` for one
 * API key. `enter` returns the way out, or null when either is full or the room
 * is closed (shutdown: every hold is let go at once, and none taken after).
 */
export type WaitingRoom = {
  enter(keyId: string): (() => void) | null;
  /** Holds right now. */
  waiting(): number;
  /** Whether the room was closed. */
  closed(): boolean;
  /** A promise that resolves when the room closes. */
  closing: Promise<void>;
  close(): void;
};

export function createWaitingRoom(limits: { max: number; perKey: number }): WaitingRoom {
  const byKey = new Map<string, number>();
  let total = 0;
  let isClosed = false;
  let closeNow = () => {};
  const closing = new Promise<void>((resolve) => {
    closeNow = resolve;
  });
  return {
    enter(keyId) {
      const own = byKey.get(keyId) ?? 0;
      if (isClosed || total >= limits.max || own >= limits.perKey) return null;
      total += 1;
      byKey.set(keyId, own + 1);
      let left = false;
      return () => {
        if (left) return;
        left = true;
        total -= 1;
        const now = (byKey.get(keyId) ?? 1) - 1;
        if (now === 0) byKey.delete(keyId);
        else byKey.set(keyId, now);
      };
    },
    waiting: () => total,
    closed: () => isClosed,
    closing,
    close() {
      isClosed = true;
      closeNow();
    },
  };
}

/** What holds need from the application: its notifications, its room, and how often to poll without them. */
export type ConditionalReads = {
  changes: Pick<ResourceChanges, "listening" | "watch">;
  room: WaitingRoom;
  pollIntervalMs: number;
};

/**
 * When the answer will change without any statement: a pending verification
 * reads as expired from its `expires_at` on (ms since the epoch; null: never).
 */
function scheduledChangeAt(data: unknown): number | null {
  const resource = data as { status?: unknown; expires_at?: unknown } | null;
  if (resource?.status !== "pending" || typeof resource.expires_at !== "string") return null;
  const at = Date.parse(resource.expires_at);
  return Number.isNaN(at) ? null : at;
}

function withTag(
  answer: ProcedureAnswer,
  tag: string,
  appliedSeconds: number | null,
): Record<string, string> {
  return {
    ...answer.headers,
    ETag: tag,
    ...(appliedSeconds === null ? {} : { "Preference-Applied": `wait=${appliedSeconds}` }),
  };
}

function full(answer: ProcedureAnswer, tag: string, appliedSeconds: number | null): Response {
  return new Response(answer.body, {
    status: answer.status,
    headers: { ...withTag(answer, tag, appliedSeconds), "Content-Type": "application/json" },
  });
}

function notModified(answer: ProcedureAnswer, tag: string, appliedSeconds: number | null): Response {
  return new Response(null, { status: 304, headers: withTag(answer, tag, appliedSeconds) });
}

/** Resolves after `ms`, at `wake()`, at the client's abort or at the room's closing, whichever is first. */
function pause(
  ms: number,
  signal: AbortSignal,
  closing: Promise<void>,
): { done: Promise<void>; wake(): void } {
  let wake = () => {};
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(finish, Math.max(0, ms));
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      resolve();
    }
    wake = finish;
    signal.addEventListener("abort", finish, { once: true });
    void closing.then(finish);
  });
  return { done, wake };
}

/**
 * A conditional route's answer: the current state with its ETag; 304 when
 * If-None-Match matches; with `Prefer: wait`, held as the top of this file says.
 * `read` runs the procedure (in its read turn: a hold keeps no turn between
 * reads); `id` is the resource's id from the path, watched from before the
 * first read so that no change between that read and the hold is missed.
 */
export async function answerConditionally(options: {
  state: RequestState;
  id: string;
  read: () => Promise<ProcedureAnswer>;
  reads: ConditionalReads | undefined;
}): Promise<Response> {
  const { state, reads } = options;
  const headers = state.request.headers;
  const condition = headers.get("if-none-match");
  const wanted = condition === null || !reads ? null : preferredWait(headers.get("prefer"));
  if (wanted === null || !reads) {
    const answer = await options.read();
    const tag = entityTag(answer.body);
    if (answer.status === 200 && ifNoneMatchMatches(condition, tag)) return notModified(answer, tag, null);
    return full(answer, tag, null);
  }
  const seconds = Math.min(wanted, MAX_WAIT_SECONDS);
  let woken = false;
  let current: { wake(): void } | null = null;
  const stopWatching = reads.changes.watch(options.id, () => {
    woken = true;
    current?.wake();
  });
  let leave: (() => void) | null = null;
  try {
    let answer = await options.read();
    let tag = entityTag(answer.body);
    if (answer.status !== 200 || !ifNoneMatchMatches(condition, tag)) return full(answer, tag, seconds);
    // The key is known once the first read has authenticated it.
    leave = seconds > 0 ? reads.room.enter(state.apiKey?.id ?? "") : null;
    if (!leave) return notModified(answer, tag, null);
    state.held = true;
    const signal = state.request.signal;
    const deadline = performance.now() + seconds * 1000;
    for (;;) {
      const remaining = deadline - performance.now();
      if (remaining <= 0 || signal.aborted || reads.room.closed()) return notModified(answer, tag, seconds);
      if (!woken) {
        let ms = remaining;
        if (!reads.changes.listening()) ms = Math.min(ms, reads.pollIntervalMs);
        const scheduled = scheduledChangeAt(answer.data);
        // A little after the second it names: the read then sees it passed.
        if (scheduled !== null) ms = Math.min(ms, scheduled - Date.now() + 50);
        const paused = pause(ms, signal, reads.room.closing);
        current = paused;
        await paused.done;
        current = null;
        if (signal.aborted || reads.room.closed()) return notModified(answer, tag, seconds);
        // The deadline passed with nothing to read again for.
        if (!woken && ms === remaining) return notModified(answer, tag, seconds);
      }
      woken = false;
      answer = await options.read();
      tag = entityTag(answer.body);
      if (answer.status !== 200 || !ifNoneMatchMatches(condition, tag)) return full(answer, tag, seconds);
    }
  } finally {
    leave?.();
    stopWatching();
  }
}

/**
 * A watch on one id for a caller that reads in process (MCP's wait_for_message): `next()` resolves at the
 * first wake since the last one was taken (at once if one came meanwhile); `cancel()` gives up a `next()`
 * that lost its race, so that a later wake is kept for the next one. Start it before the first read.
 */
export function watchChanges(
  changes: Pick<ResourceChanges, "watch">,
  id: string,
): { next(): Promise<void>; cancel(): void; stop(): void } {
  let pending = false;
  let waiter: (() => void) | null = null;
  const stop = changes.watch(id, () => {
    const resolve = waiter;
    waiter = null;
    if (resolve) resolve();
    else pending = true;
  });
  return {
    next() {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        waiter = resolve;
      });
    },
    cancel() {
      waiter = null;
    },
    stop,
  };
}
