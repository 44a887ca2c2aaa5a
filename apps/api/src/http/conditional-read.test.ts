import { describe, expect, it } from "vitest";
import { waitingLimits } from "../config/http.ts";
import {
  createWaitingRoom,
  entityTag,
  ifNoneMatchMatches,
  preferredWait,
  watchChanges,
} from "./conditional-read.ts";

describe("entityTag", () => {
  it("is strong, quoted, and follows the bytes alone", () => {
    const a = entityTag('{"status":"submitted"}');
    expect(a).toMatch(/^"[0-9a-f]{32}"$/);
    expect(entityTag('{"status":"submitted"}')).toBe(a);
    expect(entityTag('{"status":"delivered"}')).not.toBe(a);
  });
});

describe("ifNoneMatchMatches (RFC 9110 §13.1.2: weak comparison)", () => {
  const tag = '"abc"';
  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['"x",W/"abc"', true],
    ["*", true],
    [" * ", true],
    ['"abcd"', false],
    ["abc", false],
    ['"x"', false],
    ["", false],
  ])("%s → %s", (header, matches) => {
    expect(ifNoneMatchMatches(header, tag)).toBe(matches);
  });
  it("no header matches nothing", () => {
    expect(ifNoneMatchMatches(null, tag)).toBe(false);
  });
});

describe("preferredWait (RFC 7240 §4.3)", () => {
  it.each([
    ["wait=10", 10],
    ["WAIT=10", 10],
    ["wait = 5", 5],
    ['wait="7"', 7],
    ["respond-async, wait=20", 20],
    ["wait=3;foo=bar", 3],
    ["wait=600", 600],
    ["wait=0", 0],
    ["wait=2, wait=9", 2],
  ])("%s → %d", (header, seconds) => {
    expect(preferredWait(header)).toBe(seconds);
  });
  it.each([
    ["wait=-1"],
    ["wait=abc"],
    ["wait="],
    ["wait"],
    ["respond-async"],
    ["return=minimal"],
    ["waiting=3"],
  ])("%s → none", (header) => {
    expect(preferredWait(header)).toBeNull();
  });
  it("no header, no wait", () => {
    expect(preferredWait(null)).toBeNull();
  });
});

describe("the waiting room", () => {
  it("bounds holds per key and per instance, gives them back once, and closes", async () => {
    const room = createWaitingRoom({ max: 3, perKey: 2 });
    const a1 = room.enter("a");
    const a2 = room.enter("a");
    expect(a1).not.toBeNull();
    expect(a2).not.toBeNull();
    expect(room.enter("a")).toBeNull();
    const b1 = room.enter("b");
    expect(b1).not.toBeNull();
    expect(room.enter("c")).toBeNull();
    expect(room.waiting()).toBe(3);
    a1?.();
    a1?.();
    expect(room.waiting()).toBe(2);
    expect(room.enter("b")).not.toBeNull();
    let closed = false;
    void room.closing.then(() => {
      closed = true;
    });
    room.close();
    await room.closing;
    expect(closed).toBe(true);
    expect(room.closed()).toBe(true);
    a2?.();
    expect(room.enter("d")).toBeNull();
  });
});

describe("waitingLimits: holds are counted in the connection budget", () => {
  it("takes at most half of MAX_CONNECTIONS, and a key at most the instance's", () => {
    expect(waitingLimits(512, 64, 1024)).toEqual({ max: 512, perKey: 64 });
    expect(waitingLimits(512, 64, 100)).toEqual({ max: 50, perKey: 50 });
    expect(waitingLimits(10, 64, 1024)).toEqual({ max: 10, perKey: 10 });
    expect(waitingLimits(512, 64, 1)).toEqual({ max: 0, perKey: 0 });
  });
});

describe("watchChanges", () => {
  function feed() {
    const wakes = new Map<string, Set<() => void>>();
    return {
      changes: {
        watch(id: string, wake: () => void) {
          const set = wakes.get(id) ?? new Set();
          set.add(wake);
          wakes.set(id, set);
          return () => set.delete(wake);
        },
      },
      notify: (id: string) => {
        for (const wake of wakes.get(id) ?? []) wake();
      },
      watchers: (id: string) => wakes.get(id)?.size ?? 0,
    };
  }

  it("keeps a wake that came before next(), and one that came after a next() was cancelled", async () => {
    const { changes, notify, watchers } = feed();
    const watch = watchChanges(changes, "msg_1");
    notify("msg_1");
    await watch.next();
    let resolved = false;
    void watch.next().then(() => {
      resolved = true;
    });
    notify("msg_2");
    await Promise.resolve();
    expect(resolved).toBe(false);
    // The race was lost elsewhere: a wake now is kept for the next next().
    watch.cancel();
    notify("msg_1");
    await Promise.resolve();
    expect(resolved).toBe(false);
    await watch.next();
    watch.stop();
    expect(watchers("msg_1")).toBe(0);
  });
});
