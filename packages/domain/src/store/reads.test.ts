// Read-your-writes (reads.ts): which misses of the replica are read again on
// the primary, decided from the id's own creation time.
import { newId } from "@sms/crypto";
import { describe, expect, it } from "vitest";
import { readYourWrites } from "./reads.ts";

const NOW = Date.parse("2026-11-25T12:00:00Z");
const WINDOW = 30_000;

function routing() {
  const fallbacks: string[] = [];
  const byId = readYourWrites({
    replica: { query: async () => [] },
    recentWindowMs: WINDOW,
    now: () => NOW,
    onFallback: (reason) => fallbacks.push(reason),
  });
  return { byId, fallbacks };
}

const answers = <T>(replica: T, primary: T) => [async () => replica, async () => primary] as const;

describe("readYourWrites", () => {
  it("keeps what the replica found, whatever the id's age", async () => {
    const { byId, fallbacks } = routing();
    expect(await byId(newId("msg", NOW - 1), ...answers({ from: "replica" }, { from: "primary" }))).toEqual({
      from: "replica",
    });
    expect(await byId(newId("msg", NOW - 1), ...answers(["replica"], ["primary"]))).toEqual(["replica"]);
    expect(fallbacks).toEqual([]);
  });

  it("reads a recent id the replica lacks (null, or an empty list) on the primary, and says so", async () => {
    const { byId, fallbacks } = routing();
    expect(await byId(newId("msg", NOW - WINDOW + 1), ...answers(null, { from: "primary" }))).toEqual({
      from: "primary",
    });
    expect(await byId(newId("vrf", NOW), ...answers([] as string[], ["event"]))).toEqual(["event"]);
    // Minted by an instance whose clock runs ahead: recent too.
    expect(await byId(newId("req", NOW + 5_000), ...answers(null, "found"))).toBe("found");
    expect(fallbacks).toEqual(["not_found_recent", "not_found_recent", "not_found_recent"]);
  });

  it("gives the replica's answer for an id as old as the window or older, and for a malformed id", async () => {
    const { byId, fallbacks } = routing();
    expect(await byId(newId("msg", NOW - WINDOW), ...answers(null, "primary"))).toBeNull();
    expect(await byId(newId("msg", NOW - 86_400_000), ...answers([] as string[], ["primary"]))).toEqual([]);
    expect(await byId("msg_invalid", ...answers(null, "primary"))).toBeNull();
    expect(await byId("prj_not-an-id", ...answers(null, "primary"))).toBeNull();
    expect(fallbacks).toEqual([]);
  });
});
