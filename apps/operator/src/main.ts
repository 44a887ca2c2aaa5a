// The Deno entry of the operator's tool:
//   npm run operator -- <command> [flags]
// (scripts/bootstrap.mjs runs `deno run … apps/operator/src/main.ts`). Reads the
// service's configuration (apps/api/src/config/; in development the token file `npm start`
// wrote, .data/internal-token), calls the running service's operator
// procedures over its internal listener with the typed @trpc/client
// (cli.ts), prints, and exits: 0 done, 1 refused or the
// service not reached, 2 bad usage or configuration.
import { userInfo } from "node:os";
import process from "node:process";
import {
  type Config,
  ConfigError,
  createInternalClient,
  parseEnv,
  readDevelopmentFile,
  scrubText,
} from "@sms/api";
import { parseOperatorArgs, runOperatorCli, USAGE, UsageError } from "./cli.ts";

function exit(code: number, stdout: string[] = [], stderr: string[] = []): never {
  for (const line of stdout) console.log(line);
  for (const line of stderr) console.error(line);
  process.exit(code);
}

function osUser(): string {
  try {
    return userInfo().username || "operator";
  } catch {
    return "operator";
  }
}

/** The internal listener's address as a client reaches it (a wildcard host means this machine). */
function internalBaseUrl(internal: NonNullable<Config["internal"]>): string {
  const host = ["0.0.0.0", "::", ""].includes(internal.host) ? "127.0.0.1" : internal.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${internal.port}`;
}

const argv = process.argv.slice(2);
try {
  if (parseOperatorArgs(argv).command === "help") exit(0, [USAGE]);
} catch (error) {
  if (error instanceof UsageError) exit(2, [], [`operator: ${error.message}`]);
  throw error;
}

let config: Config;
try {
  // Development: without INTERNAL_API_TOKEN, the token `npm start` generated into .data/internal-token
  // (read, never created here); production and tests take only the explicit settings.
  config = parseEnv(process.env, { developmentToken: readDevelopmentFile });
} catch (error) {
  exit(2, [], [`operator: ${error instanceof ConfigError ? error.message : "Invalid configuration"}`]);
}
const internal = config.internal;
if (!internal || internal.port === 0) {
  exit(
    2,
    [],
    [
      "operator: the tool calls the running service's internal listener: set INTERNAL_PORT and INTERNAL_API_TOKEN as the service has them (in development, plain `npm start` opens it on PORT + 1 with a token in .data/internal-token).",
    ],
  );
}

const baseUrl = internalBaseUrl(internal);
let result: Awaited<ReturnType<typeof runOperatorCli>>;
try {
  result = await runOperatorCli({
    argv,
    client: (actor) =>
      createInternalClient({
        baseUrl,
        token: internal.token,
        operator: actor,
        // One deadline per call: a service that never answers ends the command.
        fetch: (input, init) =>
          fetch(input, { ...init, signal: AbortSignal.timeout(config.operatorTimeoutMs) }),
      }),
    defaultActor: osUser(),
    cacheTtlMs: config.apiKeyCacheTtlMs,
  });
} catch (error) {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : "unexpected failure";
  result = { exitCode: 1, stdout: [], stderr: [`operator: ${scrubText(message.split("\n")[0] ?? "")}`] };
}
exit(result.exitCode, result.stdout, result.stderr);
