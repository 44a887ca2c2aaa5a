import { describe, expect, it } from "vitest";
import type { AppLogger } from "../logger.ts";
import { newRequestState } from "./request-state.ts";

/** A logger that only counts the child loggers made from it. */
function countingLogger() {
  const children: object[] = [];
  const child = { info: () => undefined } as unknown as AppLogger;
  const logger = {
    child(bindings: object) {
      children.push(bindings);
      return child;
    },
  } as unknown as AppLogger;
  return { logger, child, children };
}

describe("newRequestState", () => {
  it("makes the request's logger on first use, once, bound to its request id", () => {
    const { logger, child, children } = countingLogger();
    const state = newRequestState(
      "req_1",
      new Request("http://localhost/v1/messages"),
      "203.0.113.7",
      logger,
    );
    expect(children).toEqual([]);
    expect(state.log).toBe(child);
    expect(state.log).toBe(child);
    expect(children).toEqual([{ request_id: "req_1" }]);
  });

  it("carries what the gateway and the procedures set, every property there from the start", () => {
    const { logger } = countingLogger();
    const request = new Request("http://localhost/v1/messages");
    const state = newRequestState("req_2", request, "203.0.113.7", logger);
    // One shape for every request: what procedures set later is already a property (undefined).
    expect(Object.keys(state).sort()).toEqual(
      [
        "apiKey",
        "clientAddress",
        "held",
        "messageId",
        "projectId",
        "request",
        "requestId",
        "verificationId",
      ].sort(),
    );
    expect(state).toMatchObject({ requestId: "req_2", request, clientAddress: "203.0.113.7" });
    expect(state.projectId).toBeUndefined();
    state.projectId = "prj_1";
    state.apiKey = { id: "key_1", mode: "test" };
    state.messageId = "msg_1";
    expect(state).toMatchObject({
      projectId: "prj_1",
      apiKey: { id: "key_1", mode: "test" },
      messageId: "msg_1",
    });
  });
});
