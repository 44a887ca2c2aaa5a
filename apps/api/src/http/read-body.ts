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
  reader: { cancel(): Promise<void> };
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
 * A body without a declared length (chunked) starts in a buffer this large,
 * and each of its reads is offered at least this much room: Deno 2.9 never
 * answers a read of a few bytes from a chunked body (one of 1 or 2 bytes
 * waited forever with the rest of a 1 KiB chunk already received).
 */
const CHUNKED_ROOM = 1024;

/**
 * Where a body's bytes go as they arrive: one buffer of the body's declared
 * length (plus one byte, so that the read that finds the end has room), or
 * for a chunked body one that grows as it fills; never more than
 * `limit + room` bytes. What a body holds is its own bytes, never the
 * runtime's read buffers (a default reader hands over each read, even of one
 * byte, as a view of a new 64 KiB buffer: a slow body kept one per read,
 * about 375 KB each, issue 53, G2).
 */
type BodyBuffer = { bytes: Uint8Array; size: number; limit: number; room: number };

function bodyBuffer(declared: number | null, limit: number): BodyBuffer {
  const room = declared === null ? CHUNKED_ROOM : 1;
  const capacity = declared === null ? CHUNKED_ROOM : Math.min(declared, limit) + 1;
  return { bytes: new Uint8Array(Math.max(1, capacity)), size: 0, limit, room };
}

/** At least the buffer's `room` free for the next read; false once the body is over the limit. */
function makeRoom(buffer: BodyBuffer): boolean {
  if (buffer.size > buffer.limit) return false;
  if (buffer.bytes.byteLength - buffer.size >= buffer.room) return true;
  const wanted = Math.max(buffer.bytes.byteLength * 2, buffer.size + buffer.room);
  const grown = new Uint8Array(Math.min(wanted, buffer.limit + buffer.room));
  grown.set(buffer.bytes.subarray(0, buffer.size));
  buffer.bytes = grown;
  return true;
}

/**
 * A body's reader, and `next`, which reads into a BodyBuffer with room
 * (makeRoom): false at the end of the body, true after some bytes; it throws
 * what the stream throws.
 */
type BodyReader = {
  reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array>;
  next(buffer: BodyBuffer): Promise<boolean>;
};

/**
 * With a BYOB reader straight into the buffer's free part (the runtime's
 * request bodies are byte streams: it then allocates nothing per read), else
 * (any other stream) by copying each chunk in.
 */
function bodyReader(body: ReadableStream<Uint8Array>): BodyReader {
  let byob: ReadableStreamBYOBReader | null = null;
  // A body that had arrived whole is not a byte stream (Deno 2.9 hands it over
  // as an ordinary stream of one chunk), so this throws on most small posts:
  // without a stack to capture, the throw costs about a sixth (issue 52's guard).
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream.
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
  if (byob) {
    const reader = byob;
    return {
      reader,
      async next(buffer) {
        const free = new Uint8Array(buffer.bytes.buffer, buffer.size, buffer.bytes.byteLength - buffer.size);
        const result = await reader.read(free);
        // The read took the buffer over (it is transferred): its bytes come back in the result's.
        if (result.value) buffer.bytes = new Uint8Array(result.value.buffer);
        if (result.done) return false;
        buffer.size += result.value.byteLength;
        return true;
      },
    };
  }
  const reader = body.getReader();
  return {
    reader,
    async next(buffer) {
      const result = await reader.read();
      if (result.done) return false;
      let chunk = result.value;
      while (chunk.byteLength > 0) {
        if (!makeRoom(buffer)) {
          // Over the limit: counted, not kept.
          buffer.size += chunk.byteLength;
          break;
        }
        const part = chunk.subarray(0, buffer.bytes.byteLength - buffer.size);
        buffer.bytes.set(part, buffer.size);
        buffer.size += part.byteLength;
        chunk = chunk.subarray(part.byteLength);
      }
      return true;
    },
  };
}

/**
 * The body as text, or null when it is larger than `limit` bytes (declared or
 * actual; reading stops at the limit). Throws ApiError `request_timeout` when
 * the body does not arrive by the deadline the server set, and ApiError
 * `invalid_request` when it is not valid UTF-8 or its chunked framing is
 * malformed. While it waits, a body holds at most its declared length (or,
 * chunked, about twice what has arrived), never much more than `limit` bytes:
 * BodyBuffer.
 */
export async function readBodyText(request: Request, limit: number): Promise<string | null> {
  const length = request.headers.get("content-length");
  if (Number(length ?? "0") > limit) return null;
  const declared = length === null || request.headers.has("transfer-encoding") ? null : Number(length);
  if (!request.body) {
    fullyRead.add(request);
    return "";
  }
  const { reader, next } = bodyReader(request.body);
  const buffer = bodyBuffer(Number.isFinite(declared) ? declared : null, limit);
  const bodyTerms = terms.get(request);
  const entry: Watched | undefined =
    bodyTerms === undefined
      ? undefined
      : { terms: bodyTerms, reader, expired: false, received: 0, lastReadAt: bodyTerms.startedAt };
  if (entry) watched.add(entry);
  try {
    for (;;) {
      let more: boolean;
      try {
        more = await next(buffer);
      } catch (error) {
        if (entry?.expired) throw new ApiError("request_timeout", REFUSAL_MESSAGES.request_timeout);
        if (MALFORMED_BODY.test((error as Error | undefined)?.message ?? "")) {
          framingFailed.add(request);
          throw new ApiError("invalid_request", REFUSAL_MESSAGES.malformed_chunked_body);
        }
        // Otherwise the body stream fails only when the connection ends before the body does.
        throw new ClientClosedRequest();
      }
      // Before the end: cancelLateBodies' cancel also ends the read as done.
      if (entry?.expired) throw new ApiError("request_timeout", REFUSAL_MESSAGES.request_timeout);
      if (!more) break;
      if (entry) {
        entry.received = buffer.size;
        entry.lastReadAt = performance.now();
      }
      if (!makeRoom(buffer)) {
        await reader.cancel().catch(() => {});
        return null;
      }
    }
  } finally {
    if (entry) watched.delete(entry);
    bodyTerms?.onSettled?.();
  }
  fullyRead.add(request);
  try {
    return utf8.decode(buffer.bytes.subarray(0, buffer.size));
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
