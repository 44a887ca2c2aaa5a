#!/usr/bin/env node
// `prisma generate` without Prisma's downloadable schema engine: the CLI only
// checks that PRISMA_SCHEMA_ENGINE_BINARY names an existing file, and the stub
// it names explains that this project applies migrations itself.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const result = spawnSync(join(root, "node_modules", ".bin", "prisma"), ["generate"], {
  cwd: root,
  stdio: "inherit",
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: join(root, "scripts", "prisma-schema-engine-stub.sh"),
    CHECKPOINT_DISABLE: "1",
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
  },
});
process.exit(result.status ?? 1);
