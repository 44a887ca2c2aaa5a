#!/bin/sh
# Stand-in for Prisma's native schema engine, which cannot be downloaded here.
# `prisma generate` only checks that the file exists. Migrations are applied by
# this project's own migrator: run `npm run db:migrate`.
echo "This project applies migrations itself: run 'npm run db:migrate' (apps/api/src/migrate.ts, packages/db/src/migrate-cli.ts)." >&2
exit 1
