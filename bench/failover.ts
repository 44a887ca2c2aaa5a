// Failover: the time from losing the primary to the service's first
// successful write (bench/README.md#failover). A Patroni cluster of two
// nodes and HAProxy from the shipped templates (@sms/db/testing
// startPatroniCluster), the API with DATABASE_URL on HAProxy, test sends from
// four clients; then, --runs times (default 5): the primary's machine dies
// (kill -9 of its Patroni and postmaster), the first 201 of a send started
// after the kill is timed, the old primary is started again and rejoins as the
// synchronous standby before the next run. Prints one JSON line per run and a
// summary with the median.
//
//   node scripts/bootstrap.mjs bench failover [--runs=5] [--clients=4]
import { startPatroniCluster } from "@sms/db/testing";
import { benchArgs, median, sendCode, sleep, startApi } from "./support.ts";

const args = benchArgs();
const runs = Number(args.runs ?? 5);
const clients = Number(args.clients ?? 4);
const BOUND_MS = 20_000;

const cluster = await startPatroniCluster();
let api: Awaited<ReturnType<typeof startApi>> | undefined;
try {
  api = await startApi({
    env: {
      DATABASE_URL: cluster.url,
      DATABASE_CONNECT_TIMEOUT_MS: "2000",
      MESSAGES_PER_MINUTE: "1000000",
      TEST_KEYS_PER_MINUTE: "1000",
      LOG_LEVEL: "warn",
    },
    output: "discarded",
  });
  const baseUrl = api.baseUrl;
  const keys: string[] = [];
  for (let index = 0; index < clients; index++) {
    const response = await fetch(`${baseUrl}/v1/test-keys`, { method: "POST" });
    keys.push(((await response.json()) as { api_key: string }).api_key);
  }
  const send = async (apiKey: string, turn: number) => {
    const startedAt = Date.now();
    try {
      const response = await sendCode(
        baseUrl,
        apiKey,
        `+99555513${String(turn % 10_000).padStart(4, "0")}`,
        AbortSignal.timeout(BOUND_MS),
      );
      await response.body?.cancel();
      return { startedAt, status: response.status };
    } catch {
      return { startedAt, status: 0 };
    }
  };

  const figures: number[] = [];
  for (let run = 0; run < runs; run++) {
    const { leader, standby } = await cluster.healthy(120_000);
    let running = true;
    let killedAt = Number.POSITIVE_INFINITY;
    let firstWrite: number | undefined;
    const statuses = new Map<number, number>();
    const loops = keys.map(async (apiKey) => {
      for (let turn = 0; running && turn < 100_000; turn++) {
        const result = await send(apiKey, turn);
        statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);
        if (result.status === 201 && result.startedAt > killedAt && firstWrite === undefined) {
          firstWrite = result.startedAt;
        }
        await sleep(100);
      }
    });
    await sleep(3_000);
    killedAt = Date.now();
    cluster.killNode(leader);
    for (let turn = 0; turn < 600 && firstWrite === undefined; turn++) await sleep(100);
    running = false;
    await Promise.all(loops);
    if (firstWrite === undefined) throw new Error(`run ${run + 1}: no write within 60 s\n${cluster.logs()}`);
    const ms = firstWrite - killedAt;
    figures.push(ms);
    console.log(
      JSON.stringify({
        run: run + 1,
        killed: leader,
        promoted: standby,
        kill_to_first_write_ms: ms,
        statuses: Object.fromEntries(statuses),
      }),
    );
    cluster.startNode(leader);
    const after = await cluster.healthy(120_000);
    if (after.leader !== standby || after.standby !== leader)
      throw new Error(`run ${run + 1}: ${JSON.stringify(after)}`);
  }
  console.log(
    JSON.stringify({
      bench: "failover",
      runs,
      clients,
      median_kill_to_first_write_ms: median(figures),
      min_ms: Math.min(...figures),
      max_ms: Math.max(...figures),
    }),
  );
} finally {
  await api?.stop();
  await cluster.stop();
}
