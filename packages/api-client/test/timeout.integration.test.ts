// The request timeout with the runtime's own fetch against a server that takes
// requests and never answers: the attempt ends with SmsTimeoutError and its
// connection is closed, also when a garbage collection runs while the request
// is in flight. Node's fetch links a Request's signal to the caller's through
// weak references (nodejs/node#55428): before the client held its Request for
// the whole attempt, a collection there lost the timeout's abort, and the
// request waited for ever (a flake of the package's integration suite).
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSmsClient, SmsTimeoutError } from "../src/index.ts";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

let silent: Server;
let silentUrl: string;
/** The connections that carried a request and are still open. */
const open = new Set<Socket>();

beforeAll(async () => {
  silent = createServer((request) => {
    const socket = request.socket;
    if (socket.destroyed) return;
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(() => {
  silent?.closeAllConnections();
  silent?.close();
});

const body = {
  to: "+995555123456",
  template: "password_reset_code",
  variables: { code: "482913", minutes: "15" },
  locale: "en",
} as const;

describe("the request timeout against a server that never answers", () => {
  it.each([
    ["with no collection in flight", false],
    ["with a garbage collection while the request is in flight", true],
  ])("%s: SmsTimeoutError, and the request's connection is closed", async (_name, collect) => {
    let sent = 0;
    const sms = createSmsClient({
      baseUrl: silentUrl,
      apiKey: "sk_test_x",
      timeoutMs: 300,
      retry: { attempts: 1 },
      // The runtime's fetch, given only the Request: nothing here holds it once the fetch has started.
      fetch: (request) => {
        sent += 1;
        const response = fetch(request);
        if (collect) setTimeout(collectGarbage, 50);
        return response;
      },
    });
    const error = await sms
      .sendMessage(body, { idempotencyKey: `silent-${collect}` })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SmsTimeoutError);
    expect(error).toMatchObject({ code: "timeout", status: null, attempts: 1 });
    expect(sent).toBe(1);
    // The abort reached the request: its connection is closed, not left waiting on the server.
    await vi.waitFor(() => expect(open.size).toBe(0), { timeout: 10_000, interval: 20 });
  });
});
