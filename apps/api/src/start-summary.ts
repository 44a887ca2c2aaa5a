// The few human lines `npm start` prints before its JSON log lines, in
// development only (NODE_ENV=development, the default): where to go, and what
// the development defaults mean. On standard error, so that standard output
// stays one JSON line per entry.
import type { Config } from "./config/index.ts";

/** The summary's lines, or none outside development (and for a worker, none: it serves no pages). */
export function startSummary(config: Config, role: "api" | "worker"): string[] {
  if (config.nodeEnv !== "development" || role !== "api") return [];
  const base = config.publicBaseUrl;
  const port = config.port === 0 ? "a free port (see the listening line)" : base;
  const database = config.database.url
    ? "PostgreSQL at DATABASE_URL"
    : `PGlite (embedded PostgreSQL) in ${config.database.pgliteDataDir}; set DATABASE_URL for PostgreSQL`;
  const provider = config.ubill
    ? "test keys go to the fake provider; live keys send real SMS through uBill"
    : "test keys go to the fake provider (nothing leaves this machine); live sends answer 503 until UBILL_* is set";
  const signIn = config.dashboard.devSignIn
    ? `"Sign in as a local developer": anyone who reaches ${config.host} can sign in as anyone`
    : "Google/GitHub as configured";
  const internal = config.internal
    ? `http://${config.internal.host}:${config.internal.port} (npm run operator -- help)${
        config.internal.tokenFile ? `, token in ${config.internal.tokenFile}` : ""
      }`
    : "off (set INTERNAL_PORT and INTERNAL_API_TOKEN)";
  return [
    `SMS API (development) on ${port}`,
    `  API reference  ${base}/docs`,
    `  dashboard      ${base}/dashboard`,
    `  MCP server     ${base}/mcp`,
    `  for agents     ${base}/llms.txt`,
    "Development defaults (NODE_ENV=production turns each off; docs/operations.md lists the variables):",
    `  database       ${database}`,
    `  provider       ${provider}`,
    `  sign-in        ${signIn}`,
    `  internal       ${internal}`,
    `  secrets        ${secrets(config)}`,
    "Ctrl-C stops the service (a second Ctrl-C forces it). JSON log lines follow.",
  ];
}

function secrets(config: Config): string {
  const missing = [
    config.messageEncryptionKeys ? null : "MESSAGE_ENCRYPTION_KEYS",
    config.claims.cookieSecret ? null : "CLAIM_COOKIE_SECRET",
  ].filter((name) => name !== null);
  if (missing.length === 0) return "as configured";
  const where =
    config.database.pgliteDataDir === "memory://"
      ? "in memory for this run"
      : "once, into files beside the data directory";
  return `${missing.join(" and ")} generated ${where}`;
}
