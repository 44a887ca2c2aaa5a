import { describe, expect, it } from "vitest";
import { ApiError } from "../contract/api-error.ts";
import {
  type BodyTerms,
  bodyBreaksTerms,
  bodyLeftUnread,
  cancelLateBodies,
  readBodyText,
  setBodyTerms,
} from "./read-body.ts";

/** Terms with only a deadline for the whole body (no read timeout, no minimum rate). */
function setBodyDeadline(request: Request, deadline: number): void {
  setBodyTerms(request, {
    deadline,
    startedAt: performance.now(),
    readTimeoutMs: Number.POSITIVE_INFINITY,
    minBytesPerSecond: 0,
  });
}

const encoder = new TextEncoder();

/** A POST whose body is `chunks`, each delivered when pulled; `stall`: then nothing more, ever. */
function streamed(chunks: Uint8Array[], options: { stall?: boolean } = {}): Request {
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next++];
      if (chunk) controller.enqueue(chunk);
      else if (!options.stall) controller.close();
      // Stalled: pull never settles anything, as a client that stopped sending.
      else return new Promise(() => {});
    },
  });
  return new Request("http://localhost/v1/messages", {
    method: "POST",
    body,
    duplex: "half",
  } as RequestInit);
}

/**
 * A POST whose body is a byte stream, as the runtime's request bodies are (a
 * default reader gets each read as a view of a new 64 KiB buffer): `chunks`,
 * one per pull, written into the buffer the reader offers (what does not fit
 * comes with the next pull). `offered` records
 * each offered buffer's size.
 */
function byteStreamed(chunks: Uint8Array[], headers: Record<string, string> = {}) {
  const offered: number[] = [];
  const pending = [...chunks];
  const body = new ReadableStream({
    type: "bytes",
    autoAllocateChunkSize: 64 * 1024,
    pull(controller) {
      const request = controller.byobRequest;
      const chunk = pending.shift();
      if (!request?.view) throw new Error("no buffer offered");
      if (!chunk) {
        controller.close();
        request.respond(0);
        return;
      }
      offered.push(request.view.byteLength);
      // As much as the buffer takes; the rest comes with the next read, as from a socket.
      const part = chunk.subarray(0, request.view.byteLength);
      if (part.byteLength < chunk.byteLength) pending.unshift(chunk.subarray(part.byteLength));
      new Uint8Array(request.view.buffer, request.view.byteOffset, request.view.byteLength).set(part);
      request.respond(part.byteLength);
    },
  });
  const request = new Request("http://localhost/v1/messages", {
    method: "POST",
    headers,
    body,
    duplex: "half",
  } as RequestInit);
  return { request, offered };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
}

describe("readBodyText", () => {
  it("joins a body sent in many chunks, and decodes one sent in one chunk as it is", async () => {
    const text = '{"to":"+995555123456","text":"კოდი"}';
    const bytes = encoder.encode(text);
    const split = [bytes.slice(0, 5), bytes.slice(5, 31), bytes.slice(31)];
    const many = streamed(split);
    setBodyDeadline(many, performance.now() + 5_000);
    expect(await readBodyText(many, 1_000)).toBe(text);
    expect(bodyLeftUnread(many)).toBe(false);
    const one = streamed([bytes]);
    setBodyDeadline(one, performance.now() + 5_000);
    expect(await readBodyText(one, 1_000)).toBe(text);
  });

  it("refuses a body that is not UTF-8, also when a character is split between chunks", async () => {
    const bytes = encoder.encode("კ");
    expect(await readBodyText(streamed([bytes.slice(0, 1), bytes.slice(1)]), 100)).toBe("კ");
    const error = await refusal(readBodyText(streamed([new Uint8Array([0x7b, 0xff, 0x7d])]), 100));
    expect(error.code).toBe("invalid_request");
  });

  it("stops at the limit: null, the rest never read", async () => {
    const request = streamed([encoder.encode("x".repeat(60)), encoder.encode("y".repeat(60))]);
    expect(await readBodyText(request, 100)).toBeNull();
  });

  it("answers request_timeout for a body that stops arriving once its deadline is swept, and only then", async () => {
    // Deadlines on the performance.now() scale, far ahead: only the explicit sweeps below can pass them.
    const base = performance.now() + 3_600_000;
    const early = streamed([encoder.encode('{"to":')], { stall: true });
    setBodyDeadline(early, base + 1_000);
    const late = streamed([], { stall: true });
    setBodyDeadline(late, base + 5_000);
    const settled: string[] = [];
    const outcome = (name: string, reading: Promise<string | null>) =>
      refusal(reading).then((error) => {
        settled.push(name);
        return error.code;
      });
    const earlyCode = outcome("early", readBodyText(early, 1_000));
    const lateCode = outcome("late", readBodyText(late, 1_000));
    // A body that arrives in time beside them is read.
    const inTime = streamed([encoder.encode("{}")]);
    setBodyDeadline(inTime, base + 1_000);
    expect(await readBodyText(inTime, 1_000)).toBe("{}");

    cancelLateBodies(base + 999);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(settled).toEqual([]);
    cancelLateBodies(base + 1_000);
    expect(await earlyCode).toBe("request_timeout");
    expect(settled).toEqual(["early"]);
    cancelLateBodies(base + 5_000);
    expect(await lateCode).toBe("request_timeout");
    expect(settled).toEqual(["early", "late"]);
  });

  it("reads a byte stream into one buffer of the declared length: a slow body holds its own bytes, never a 64 KiB buffer per read (issue 53, G2)", async () => {
    const text = '{"to":"+995555123456"}';
    const bytes = encoder.encode(text);
    // One byte per read, as a body trickling in.
    const { request, offered } = byteStreamed(
      Array.from(bytes, (byte) => new Uint8Array([byte])),
      { "content-length": String(bytes.byteLength) },
    );
    expect(await readBodyText(request, 16 * 1024)).toBe(text);
    expect(offered).toHaveLength(bytes.byteLength);
    expect(Math.max(...offered)).toBe(bytes.byteLength + 1);
  });

  it("reads a chunked byte stream into a buffer that grows with what arrived, and stops at the limit", async () => {
    const parts = Array.from({ length: 6 }, (_, index) => encoder.encode(String(index).repeat(500)));
    const { request, offered } = byteStreamed(parts, { "transfer-encoding": "chunked" });
    expect(await readBodyText(request, 16 * 1024)).toBe(
      parts.map((part) => new TextDecoder().decode(part)).join(""),
    );
    // 1 KiB, doubled as it filled (at least 1 KiB free for each read): 3,000 bytes never needed more than 4 KiB.
    expect(Math.max(...offered)).toBeLessThanOrEqual(4096);
    const over = byteStreamed([encoder.encode("x".repeat(60)), encoder.encode("y".repeat(60))]);
    expect(await readBodyText(over.request, 100)).toBeNull();
    expect(Math.max(...over.offered)).toBeLessThanOrEqual(100 + 1024);
  });

  it("reads without a deadline when the server set none", async () => {
    expect(await readBodyText(streamed([encoder.encode("a"), encoder.encode("b")]), 10)).toBe("ab");
  });

  it("answers request_timeout for a body silent for its read timeout, well before its deadline, and tells the server once", async () => {
    const startedAt = performance.now();
    const silent = streamed([encoder.encode('{"to":')], { stall: true });
    let settledCount = 0;
    setBodyTerms(silent, {
      deadline: startedAt + 3_600_000,
      startedAt,
      readTimeoutMs: 10_000,
      minBytesPerSecond: 0,
      onSettled: () => {
        settledCount += 1;
      },
    });
    const code = refusal(readBodyText(silent, 1_000)).then((error) => error.code);
    await new Promise((resolve) => setTimeout(resolve, 10));
    cancelLateBodies(startedAt + 5_000);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(settledCount).toBe(0);
    cancelLateBodies(startedAt + 60_000);
    expect(await code).toBe("request_timeout");
    expect(settledCount).toBe(1);
  });
});

describe("bodyBreaksTerms", () => {
  const terms: BodyTerms = { deadline: 30_000, startedAt: 0, readTimeoutMs: 10_000, minBytesPerSecond: 240 };

  it("holds a body to its deadline, its read timeout and, after the read timeout, its minimum rate", () => {
    // One byte every 5 s (issue 53, G1): never silent for 10 s, but far below 240 bytes a second.
    expect(bodyBreaksTerms({ terms, received: 2, lastReadAt: 9_000 }, 9_500)).toBe(false);
    expect(bodyBreaksTerms({ terms, received: 3, lastReadAt: 15_000 }, 15_500)).toBe(true);
    // A body at the minimum rate passes; silence breaks the terms at once.
    expect(bodyBreaksTerms({ terms, received: 240 * 15, lastReadAt: 24_900 }, 25_000)).toBe(false);
    expect(bodyBreaksTerms({ terms, received: 240 * 15, lastReadAt: 14_000 }, 25_000)).toBe(true);
    // The whole-body deadline, whatever the rate.
    expect(bodyBreaksTerms({ terms, received: 100_000, lastReadAt: 29_999 }, 30_000)).toBe(true);
    // A minimum rate of 0 is off.
    const noRate = { ...terms, minBytesPerSecond: 0 };
    expect(bodyBreaksTerms({ terms: noRate, received: 1, lastReadAt: 19_000 }, 20_000)).toBe(false);
  });
});
