import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Property tests run thousands of cases; give them room on a busy 2-core machine.
    testTimeout: 120_000,
  },
});
