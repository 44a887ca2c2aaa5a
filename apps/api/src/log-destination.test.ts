import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FdWriter, fdDestination, nodeWriter } from "./log-destination.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempFile(): { fd: number; read(): string } {
  const dir = mkdtempSync(join(tmpdir(), "log-destination-"));
  dirs.push(dir);
  const path = join(dir, "log");
  const fd = openSync(path, "a");
  return { fd, read: () => readFileSync(path, "utf8") };
}

/** A writer whose asynchronous writes wait until released, and that may write less than asked. */
function heldWriter(options: { most?: number; failFirst?: string } = {}) {
  const written: string[] = [];
  const held: Array<() => void> = [];
  let fail = options.failFirst;
  const writer: FdWriter = {
    write(_fd, data, callback) {
      held.push(() => {
        if (fail) {
          const error = Object.assign(new Error(fail), { code: fail });
          fail = undefined;
          callback(error, 0);
          return;
        }
        const n = Math.min(data.length, options.most ?? data.length);
        written.push(Buffer.from(data.subarray(0, n)).toString("utf8"));
        callback(null, n);
      });
    },
    writeSync(_fd, data) {
      written.push(Buffer.from(data).toString("utf8"));
      return data.length;
    },
  };
  const releaseAll = async () => {
    while (held.length > 0) {
      held.shift()!();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  };
  return { writer, written, held, releaseAll, text: () => written.join("") };
}

describe("fdDestination", () => {
  it("writes every line, in order, and the lines that arrive during a write go together in the next", async () => {
    const { writer, written, releaseAll, text } = heldWriter();
    const destination = fdDestination({ writer });
    const lines = Array.from({ length: 5_000 }, (_, i) => `{"n":${i},"msg":"ა line ${i}"}\n`);
    for (const line of lines) destination.write(line);
    await releaseAll();
    expect(text()).toBe(lines.join(""));
    // The first line went alone; the 4 999 that came while it was written, in one more write.
    expect(written).toHaveLength(2);
  });

  it("writes the rest of a partial write before anything newer", async () => {
    const { writer, releaseAll, text } = heldWriter({ most: 7 });
    const destination = fdDestination({ writer });
    destination.write("first line\n");
    destination.write("second line\n");
    destination.write("third line\n");
    await releaseAll();
    expect(text()).toBe("first line\nsecond line\nthird line\n");
  });

  it("tries again after EAGAIN, and goes on to the next lines after another error", async () => {
    const again = heldWriter({ failFirst: "EAGAIN" });
    const destination = fdDestination({ writer: again.writer });
    destination.write("kept\n");
    await again.releaseAll();
    // The retry comes from a timer: wait for it to hand the write over again (a state, not a time).
    for (let i = 0; i < 1_000 && again.held.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await again.releaseAll();
    expect(again.text()).toBe("kept\n");

    const broken = heldWriter({ failFirst: "EBADF" });
    const other = fdDestination({ writer: broken.writer });
    other.write("lost\n");
    other.write("next\n");
    await broken.releaseAll();
    expect(broken.text()).toBe("next\n");
  });

  it("drops lines past its bound while writes lag, and says how many once it catches up", async () => {
    const { writer, releaseAll, text } = heldWriter();
    const destination = fdDestination({ writer, maxPendingBytes: 100 });
    destination.write("in flight\n"); // handed to the writer at once
    const line = `${"x".repeat(29)}\n`; // 30 each: three fit in 100
    for (let i = 0; i < 10; i++) destination.write(line);
    expect(destination.dropped()).toBe(7);
    await releaseAll();
    const out = text().split("\n").filter(Boolean);
    expect(out.slice(0, 4)).toEqual(["in flight", "x".repeat(29), "x".repeat(29), "x".repeat(29)]);
    const report = JSON.parse(out[4]!) as Record<string, unknown>;
    expect(report).toMatchObject({ level: "warn", dropped: 7 });
    expect(out).toHaveLength(5);
    // Caught up: new lines are written again, and the drops are not reported twice.
    destination.write("after\n");
    await releaseAll();
    expect(text().endsWith("after\n")).toBe(true);
    expect(text().match(/"dropped":7/g)).toHaveLength(1);
  });

  it("flush() writes the pending lines at once, and a write in flight is not written twice", async () => {
    const { writer, held, releaseAll, written } = heldWriter();
    const destination = fdDestination({ writer });
    destination.write("in flight\n");
    destination.write("pending 1\n");
    destination.write("pending 2\n");
    let flushed = false;
    destination.flush(() => {
      flushed = true;
    });
    expect(flushed).toBe(true);
    expect(written).toEqual(["pending 1\npending 2\n"]);
    expect(held).toHaveLength(1);
    await releaseAll();
    expect(written).toEqual(["pending 1\npending 2\n", "in flight\n"]);
  });

  it("writes to a real file descriptor", async () => {
    const file = tempFile();
    let writes = 0;
    // The default writer, its calls counted.
    const counted: FdWriter = {
      write(fd, data, callback) {
        writes++;
        nodeWriter.write(fd, data, callback);
      },
      writeSync: nodeWriter.writeSync,
    };
    const destination = fdDestination({ fd: file.fd, writer: counted });
    const lines = Array.from({ length: 2_000 }, (_, i) => `{"i":${i}}\n`);
    for (const line of lines) destination.write(line);
    // Until everything is there (at most 20 s on a busy machine; the test's assertions are on content and calls).
    for (let i = 0; i < 2_000 && file.read().length < lines.join("").length; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(file.read()).toBe(lines.join(""));
    expect(writes).toBeLessThan(20);
  });
});
