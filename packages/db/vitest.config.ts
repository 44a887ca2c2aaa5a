import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    setupFiles: ["./test/setup.ts"],
    // Integration tests create databases and start PGlite instances.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
