import { z } from "zod";
import type { Meta } from "../meta.ts";

export const ZLivenessResponse = z
  .strictObject({ status: z.literal("alive") })
  .meta({ id: "Liveness", example: { status: "alive" } });

export const ZReadinessResponse = z
  .strictObject({
    status: z.enum(["ready", "not_ready"]),
    database: z.enum(["ok", "unreachable"]),
  })
  .meta({ id: "Readiness", example: { status: "ready", database: "ok" } });

export const livenessMeta: Meta = {
  openapi: {
    method: "GET",
    path: "/healthz",
    operationId: "liveness",
    tags: ["Health"],
    summary: "Liveness",
    description: "Reports process liveness only. No authentication.",
  },
  responses: { 200: { description: "The process is alive." } },
  withoutDatabase: true,
};

export const readinessMeta: Meta = {
  openapi: {
    method: "GET",
    path: "/readyz",
    operationId: "readiness",
    tags: ["Health"],
    summary: "Readiness",
    description: "Ready when the database answers. No authentication; no connection details are exposed.",
  },
  responses: {
    200: { description: "Ready to serve." },
    503: {
      description: "The database cannot be reached (the body still says so).",
      examples: {
        not_ready: {
          summary: "Database unreachable",
          value: { status: "not_ready", database: "unreachable" },
        },
      },
    },
  },
  withoutDatabase: true,
};
