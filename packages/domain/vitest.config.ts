import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Integration suites make databases and start PGlite instances; on a busy two-core CI machine a
    // suite's set-up and a test that writes thousands of rows take far longer than vitest's 5 s. The
    // tests assert states, never durations.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
