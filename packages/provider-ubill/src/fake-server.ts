// A local fake of uBill's SMS API for tests (this package's, and the API's
// end-to-end tests): real HTTP on 127.0.0.1, an ephemeral port, node:http only
// so it runs under Node and Deno. It checks the `key`, records every request,
// and can be scripted per recipient number or per next call.
//
// Answer shapes follow uBill's public SDK (ubill-ge/sdk-ts): ids and the
// balance as strings, brands with `authorized: "1" | "2"`.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export const FAKE_UBILL_API_KEY = "fake-ubill-key";

export type FakeUbillEndpoint = "send" | "report" | "balance" | "brands";

/** How the fake answers one call. */
export type FakeUbillReply =
  /** Send: accept without checks (optionally with this smsID). Other endpoints: the normal answer. */
  | { kind: "accept"; smsId?: string }
  /** HTTP 200 with this (non-zero) `statusID`, e.g. 10, 20, 30, 40, 50, 90, 99. */
  | { kind: "status"; statusId: number; message?: string }
  /** This HTTP status, with this raw body (default: a small JSON message). */
  | { kind: "http"; status: number; body?: string }
  /** Wait `delayMs`, then answer as `then` (default: the normal answer). */
  | { kind: "slow"; delayMs: number; then?: FakeUbillReply }
  /** Read the request, then destroy the connection without answering. */
  | { kind: "drop" }
  /** Send the headers and part of the body, then destroy the connection (dropped mid-response). */
  | { kind: "truncate" }
  /** HTTP 200 with a truncated, unparseable JSON body. */
  | { kind: "garbage" };

export type FakeUbillRequest = {
  /** Which API call it was; null for a path uBill does not have. */
  endpoint: FakeUbillEndpoint | null;
  method: string;
  /** The path without the query string (the key is never recorded). */
  path: string;
  keyAccepted: boolean;
  /** The raw request body. */
  body: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: unknown;
};

export type FakeUbillBrand = { id: number; name: string; approved: boolean };

export type FakeUbillOptions = {
  apiKey?: string;
  /** Default: one approved brand, id 1, "SMSGE". */
  brands?: FakeUbillBrand[];
  /** SMS balance; each accepted number costs one. Default 1000. */
  balance?: number;
  /** The first smsID handed out; later ones count up. Default 117345. */
  firstSmsId?: number;
  /** Answer every delivery-report call after this long (a realistic provider latency; default 0). */
  reportDelayMs?: number;
  /** Answer every send after this long (a slow provider; default 0). A scripted reply takes precedence. */
  submitDelayMs?: number;
};

export type FakeUbill = {
  /** The base URL to give the adapter (`http://127.0.0.1:PORT`, no `/v1`). */
  readonly baseUrl: string;
  readonly port: number;
  readonly apiKey: string;
  /** Every request received so far, oldest first. */
  readonly requests: readonly FakeUbillRequest[];
  /** Only the send requests. */
  sends(): FakeUbillRequest[];
  /** Answer every send to this number ("+995…" or "995…") this way, until changed. */
  replyToNumber(number: string, reply: FakeUbillReply): void;
  /** Answer the next call (of `endpoint`, or of any endpoint) this way, once. Queued in order. */
  replyNext(reply: FakeUbillReply, endpoint?: FakeUbillEndpoint): void;
  /** Set the per-number delivery status string ("0"…"4") of a message; creates it if unknown. */
  setReport(smsId: string, status: string, number?: string): void;
  setBrands(brands: FakeUbillBrand[]): void;
  setBalance(sms: number): void;
  /**
   * From now on, answer every unscripted send after `ms` (0: at once); with `spread` (0 to 1), each after a
   * delay drawn evenly from `ms × (1 ± spread)`, whose mean is still `ms` (a provider whose answers vary).
   * Answers already waiting keep their delay.
   */
  setSubmitDelay(ms: number, spread?: number): void;
  /** From now on, answer every unscripted delivery-report call after `ms` (0: at once). */
  setReportDelay(ms: number): void;
  /** Forget recorded requests and scripted replies (reports, brands and balance stay). */
  reset(): void;
  /** Stop listening, drop open connections and pending slow answers. */
  close(): Promise<void>;
};

type ReportLine = { number: string | null; status: string };

const digitsOf = (number: string): string => number.trim().replace(/^\+/, "");

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function endpointOf(method: string, path: string): { endpoint: FakeUbillEndpoint; smsId?: string } | null {
  if (method === "POST" && path === "/v1/sms/send") return { endpoint: "send" };
  if (method === "GET" && path === "/v1/sms/balance") return { endpoint: "balance" };
  if (method === "GET" && path === "/v1/sms/brandNames") return { endpoint: "brands" };
  const report = /^\/v1\/sms\/report\/([^/]+)$/.exec(path);
  if (method === "GET" && report?.[1] !== undefined) {
    return { endpoint: "report", smsId: decodeURIComponent(report[1]) };
  }
  return null;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

/** Start a fake uBill on 127.0.0.1 with an ephemeral port. */
export async function startFakeUbill(options: FakeUbillOptions = {}): Promise<FakeUbill> {
  const apiKey = options.apiKey ?? FAKE_UBILL_API_KEY;
  let brands: FakeUbillBrand[] = [...(options.brands ?? [{ id: 1, name: "SMSGE", approved: true }])];
  let balance = options.balance ?? 1000;
  let nextSmsId = options.firstSmsId ?? 117345;
  let submitDelayMs = options.submitDelayMs ?? 0;
  let submitSpread = 0;
  let reportDelayMs = options.reportDelayMs ?? 0;
  const requests: FakeUbillRequest[] = [];
  const reports = new Map<string, ReportLine[]>();
  const numberReplies = new Map<string, FakeUbillReply>();
  let queue: { endpoint: FakeUbillEndpoint | null; reply: FakeUbillReply }[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();

  function sendJson(response: ServerResponse, status: number, payload: unknown): void {
    sendRaw(response, status, JSON.stringify(payload));
  }

  function sendRaw(response: ServerResponse, status: number, body: string): void {
    if (response.destroyed || response.writableEnded) return;
    response.writeHead(status, { "content-type": "application/json; charset=utf-8" });
    response.end(body);
  }

  function recordReport(smsId: string, numbers: unknown[]): void {
    const lines = numbers
      .filter((number) => typeof number === "number" || typeof number === "string")
      .map((number) => ({ number: digitsOf(String(number)), status: "0" }));
    reports.set(smsId, lines);
  }

  /** The normal, checking answer to a send. */
  function handleSend(json: unknown, acceptedSmsId: string | undefined, forceAccept: boolean): unknown {
    const body =
      typeof json === "object" && json !== null && !Array.isArray(json)
        ? (json as Record<string, unknown>)
        : null;
    if (body === null) return { statusID: 90, message: "JSON error" };
    const numbers = Array.isArray(body.numbers) ? body.numbers : [];
    if (!forceAccept) {
      const brand = brands.find((candidate) => candidate.id === body.brandID);
      if (brand === undefined || !brand.approved) return { statusID: 10, message: "Brand name not found" };
      if (numbers.length === 0) return { statusID: 20, message: "Numbers are missing" };
      if (typeof body.text !== "string" || body.text.trim() === "")
        return { statusID: 30, message: "Text is empty" };
      const valid = numbers.filter((number) => /^995\d{9}$/.test(String(number)));
      if (valid.length === 0) return { statusID: 50, message: "No valid numbers" };
      if (balance < valid.length) return { statusID: 40, message: "Insufficient balance" };
      balance -= valid.length;
    }
    const smsId = acceptedSmsId ?? String(nextSmsId++);
    recordReport(smsId, numbers);
    return { statusID: 0, message: "SMS sent", smsID: smsId };
  }

  function normalAnswer(
    route: { endpoint: FakeUbillEndpoint; smsId?: string },
    json: unknown,
    accept: { smsId?: string } | null,
  ): unknown {
    switch (route.endpoint) {
      case "send":
        return handleSend(json, accept?.smsId, accept !== null);
      case "report": {
        const lines = reports.get(route.smsId ?? "");
        if (lines === undefined) return { statusID: 99, message: "SMS not found" };
        return {
          statusID: 0,
          result: lines.map((line) =>
            line.number === null ? { statusID: line.status } : { number: line.number, statusID: line.status },
          ),
        };
      }
      case "balance":
        return { statusID: 0, message: "OK", sms: String(balance) };
      case "brands":
        return {
          statusID: 0,
          message: "OK",
          brands: brands.map((brand) => ({
            id: String(brand.id),
            name: brand.name,
            authorized: brand.approved ? "1" : "2",
            createdAt: "2024-01-15 12:00:00",
          })),
        };
    }
  }

  function answer(
    reply: FakeUbillReply | undefined,
    route: { endpoint: FakeUbillEndpoint; smsId?: string },
    json: unknown,
    request: IncomingMessage,
    response: ServerResponse,
  ): void {
    if (reply === undefined) {
      sendJson(response, 200, normalAnswer(route, json, null));
      return;
    }
    switch (reply.kind) {
      case "accept":
        sendJson(
          response,
          200,
          normalAnswer(route, json, reply.smsId === undefined ? {} : { smsId: reply.smsId }),
        );
        return;
      case "status":
        sendJson(response, 200, { statusID: reply.statusId, message: reply.message ?? "Error" });
        return;
      case "http":
        sendRaw(response, reply.status, reply.body ?? JSON.stringify({ message: `HTTP ${reply.status}` }));
        return;
      case "garbage":
        sendRaw(response, 200, '{"statusID":0,"message":"SMS sent","smsID":"1173');
        return;
      case "drop":
        request.socket.destroy();
        return;
      case "truncate": {
        if (response.destroyed) return;
        response.writeHead(200, {
          "content-type": "application/json; charset=utf-8",
          "content-length": "200",
        });
        response.write('{"statusID":0,"message":"SMS sent",');
        const timer = setTimeout(() => {
          timers.delete(timer);
          request.socket.destroy();
        }, 20);
        timers.add(timer);
        return;
      }
      case "slow": {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer(reply.then, route, json, request, response);
        }, reply.delayMs);
        timers.add(timer);
        return;
      }
    }
  }

  function takeQueued(endpoint: FakeUbillEndpoint): FakeUbillReply | undefined {
    const index = queue.findIndex((entry) => entry.endpoint === null || entry.endpoint === endpoint);
    if (index < 0) return undefined;
    const [entry] = queue.splice(index, 1);
    return entry?.reply;
  }

  function replyForNumbers(json: unknown): FakeUbillReply | undefined {
    const numbers = (json as { numbers?: unknown } | null | undefined)?.numbers;
    if (!Array.isArray(numbers)) return undefined;
    for (const number of numbers) {
      const reply = numberReplies.get(digitsOf(String(number)));
      if (reply !== undefined) return reply;
    }
    return undefined;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const method = request.method ?? "GET";
    const route = endpointOf(method, url.pathname);
    const json = parseJson(body);
    const keyAccepted = url.searchParams.get("key") === apiKey;
    requests.push({ endpoint: route?.endpoint ?? null, method, path: url.pathname, keyAccepted, body, json });

    if (!keyAccepted) {
      sendJson(response, 401, { message: "Unauthorized" });
      return;
    }
    if (route === null) {
      sendJson(response, 404, { message: "Not found" });
      return;
    }
    const scripted =
      takeQueued(route.endpoint) ?? (route.endpoint === "send" ? replyForNumbers(json) : undefined);
    const delayMs =
      route.endpoint === "report"
        ? reportDelayMs
        : route.endpoint === "send"
          ? submitDelayMs * (1 - submitSpread + 2 * submitSpread * Math.random())
          : 0;
    const reply = scripted === undefined && delayMs > 0 ? ({ kind: "slow", delayMs } as const) : scripted;
    answer(reply, route, json, request, response);
  }

  const server = createServer((request, response) => {
    response.on("error", () => {});
    handle(request, response).catch(() => {
      if (!response.headersSent) sendJson(response, 500, { message: "fake uBill failed" });
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    apiKey,
    get requests() {
      return [...requests];
    },
    sends: () => requests.filter((request) => request.endpoint === "send"),
    replyToNumber(number, reply) {
      numberReplies.set(digitsOf(number), reply);
    },
    replyNext(reply, endpoint) {
      queue.push({ endpoint: endpoint ?? null, reply });
    },
    setReport(smsId, status, number) {
      const lines = reports.get(smsId);
      if (lines === undefined || lines.length === 0) {
        reports.set(smsId, [{ number: number === undefined ? null : digitsOf(number), status }]);
        return;
      }
      for (const line of lines) {
        if (number === undefined || line.number === digitsOf(number)) line.status = status;
      }
    },
    setBrands(next) {
      brands = [...next];
    },
    setBalance(sms) {
      balance = sms;
    },
    setSubmitDelay(ms, spread = 0) {
      if (!(spread >= 0 && spread <= 1))
        throw new RangeError(`spread must be between 0 and 1, not ${spread}`);
      submitDelayMs = ms;
      submitSpread = spread;
    },
    setReportDelay(ms) {
      reportDelayMs = ms;
    },
    reset() {
      requests.length = 0;
      numberReplies.clear();
      queue = [];
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections?.();
      await closed;
    },
  };
}

/** A port on 127.0.0.1 that refuses connections (it was free a moment ago), for "unreachable" tests. */
export async function getRefusingPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
