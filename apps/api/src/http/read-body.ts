// Reads a request body as text without ever holding more than `limit` bytes,
// and within the terms the HTTP server set for this request (a deadline for
// the whole body, a read timeout and a minimum rate: BodyTerms). Used by
// the gateway (JSON bodies), the internal tRPC listener and the pages (form
// posts). The server (http/server.ts) closes the connection after the response
// of any request whose body was not read to its end here: an oversized,
// endless or ignored body never keeps its socket.
import { ApiError } from "../contract/api-error.ts";
import { REFUSAL_MESSAGES } from "../contract/wording.ts";

/**
 * The client closed its connection before its request body arrived in full.
 * Nobody is left to answer: the access log records it as status 499, never as
 * a 500 (http/gateway.ts).
 */
export class ClientClosedRequest extends Error {
  override name = "ClientClosedRequest";
  constructor() {
    super("The connection closed before the request body arrived.");
  }
}

/** Bodies are UTF-8 text (JSON, forms): anything else is refused, never patched with U+FFFD. */
const utf8 = new TextDecoder("utf-8", { fatal: true });
const NOT_UTF8 = "The request body is not valid UTF-8 text.";

/**
 * How the server wants a request's body to arrive (performance.now() times):
 * in full by `deadline`; after its headers, never `readTimeoutMs` without a
 * byte, and at least `minBytesPerSecond` on average once `readTimeoutMs` has
 * passed (nginx's client_body_timeout and Kestrel's minimum data rate, issue
 * 53, G1); `onSettled` is told once reading it is over, whatever the outcome.
 */
export type BodyTerms = {
  deadline: number;
  startedAt: number;
  readTimeoutMs: number;
  minBytesPerSecond: number;
  onSettled?: () => void;
};

/** Each request's body terms, set by the server. */
const terms = new WeakMap<Request, BodyTerms>();
/** Requests whose body was read to its end. */
const fullyRead = new WeakSet<Request>();
/**
 * Requests whose body the runtime failed (malformed chunked framing): Deno
 * then closes the connection itself and says so (`connection: close`).
 */
const framingFailed = new WeakSet<Request>();

/**
 * Deno's HTTP/1 parser fails a body stream with this when the chunked framing
 * is malformed (a chunk size that is not hex, a chunk longer than it says);
 * anything else failing the stream is the connection ending.
 */
const MALFORMED_BODY = /^invalid HTTP\/1 request/;

/** True when the runtime refused this request's body framing (it closes the connection and says so itself). */
export function bodyFramingFailed(request: Request): boolean {
  return framingFailed.has(request);
}

/** The server's side: how this request's body must arrive (BodyTerms). */
export function setBodyTerms(request: Request, bodyTerms: BodyTerms): void {
  terms.set(request, bodyTerms);
}

/** True when the request declares a body (Content-Length above 0, or Transfer-Encoding), whatever the method. */
export function bodyDeclared(request: Request): boolean {
  const length = request.headers.get("content-length");
  return request.headers.has("transfer-encoding") || (length !== null && length !== "0");
}

/**
 * True when the request came with a body (declared by Content-Length or
 * Transfer-Encoding, whatever the method) that was not read to its end.
 */
export function bodyLeftUnread(request: Request): boolean {
  return !fullyRead.has(request) && bodyDeclared(request);
}

/** A body being read under its terms: cancelLateBodies cancels its reader once they are broken. */
type Watched = {
  terms: BodyTerms;
  reader: ReadableStreamDefaultReader<Uint8Array>;
  expired: boolean;
  /** Bytes received so far, and when the last of them came (performance.now()). */
  received: number;
  lastReadAt: number;
};

/** The body breaks its terms at `now`: past its deadline, silent too long, or slower than the minimum rate. */
export function bodyBreaksTerms(
  entry: Pick<Watched, "terms" | "received" | "lastReadAt">,
  now: number,
): boolean {
  const { deadline, startedAt, readTimeoutMs, minBytesPerSecond } = entry.terms;
  if (now >= deadline) return true;
  if (now - entry.lastReadAt >= readTimeoutMs) return true;
  const afterGrace = now - startedAt - readTimeoutMs;
  return afterGrace > 0 && entry.received < (minBytesPerSecond * afterGrace) / 1000;
}

/** The bodies being read with a deadline: a body costs no timer, promise or race of its own. */
const watched = new Set<Watched>();

/**
 * Cancels the reading of every body that breaks its terms at `now` (its
 * deadline, its read timeout, its minimum rate): its reader answers
 * `408 request_timeout`. The server that set the deadlines
 * calls it from its connection sweep (http/server.ts), which runs anyway.
 */
export function cancelLateBodies(now: number): void {
  for (const entry of watched) {
    if (!bodyBreaksTerms(entry, now)) continue;
    entry.expired = true;
    watched.delete(entry);
    // Ends the pending read (done) and the stream: the reader sees `expired` and answers 408.
    entry.reader.cancel().catch(() => {});
  }
}

/**
 * The body as text, or null when it is larger than `limit` bytes (declared or
 * actual; reading stops at the limit). Throws ApiError `request_timeout` when
 * the body does not arrive by the deadline the server set, and ApiError
 * `invalid_request` when it is not valid UTF-8 or its chunked framing is
 * malformed.
 */
export async function readBodyText(request: Request, limit: number): Promise<string | null> {
  if (Number(request.headers.get("content-length") ?? "0") > limit) return null;
  if (!request.body) {
    fullyRead.add(request);
    return "";
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const bodyTerms = terms.get(request);
  const entry: Watched | undefined =
    bodyTerms === undefined
      ? undefined
      : { terms: bodyTerms, reader, expired: false, received: 0, lastReadAt: bodyTerms.startedAt };
  if (entry) watched.add(entry);
  try {
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await reader.read();
      } catch (error) {
        if (entry?.expired) throw new ApiError("request_timeout", REFUSAL_MESSAGES.request_timeout);
        if (MALFORMED_BODY.test((error as Error | undefined)?.message ?? "")) {
          framingFailed.add(request);
          throw new ApiError("invalid_request", REFUSAL_MESSAGES.malformed_chunked_body);
        }
        // Otherwise the body stream fails only when the connection ends before the body does.
        throw new ClientClosedRequest();
      }
      // Before `done`: cancelLateBodies' cancel also ends the read as done.
      if (entry?.expired) throw new ApiError("request_timeout", REFUSAL_MESSAGES.request_timeout);
      if (result.done) break;
      size += result.value.byteLength;
      if (entry) {
        entry.received = size;
        entry.lastReadAt = performance.now();
      }
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return null;
      }
      chunks.push(result.value);
    }
  } finally {
    if (entry) watched.delete(entry);
    bodyTerms?.onSettled?.();
  }
  fullyRead.add(request);
  // Most bodies arrive in one chunk: decoded as it is.
  let bytes = chunks[0] ?? new Uint8Array(0);
  if (chunks.length > 1) {
    bytes = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
  }
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ApiError("invalid_request", NOT_UTF8);
  }
}

/**
 * readBodyText for the JSON routes of both listeners: an oversized body is the
 * `413` error, a body that is not UTF-8 the `400 invalid_request`, both
 * returned (the caller decides when to report them).
 */
export async function readBody(request: Request, limit: number): Promise<string | ApiError> {
  let text: string | null;
  try {
    text = await readBodyText(request, limit);
  } catch (error) {
    if (error instanceof ApiError && error.message === NOT_UTF8) return error;
    throw error;
  }
  return text ?? new ApiError("payload_too_large", `The request body is larger than ${limit} bytes.`);
}
