// A V8 CPU profile of a service started with --inspect, taken through the inspector protocol
// while a scenario runs (bench messages --profile, bench live --profile).

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};

/**
 * A CPU profile of the server whose V8 inspector listens at `inspector` (host:port) while `work`
 * runs; prints the functions with the most self time, the modules, and the hottest callers.
 */
export async function profiled<T>(inspector: string, work: () => Promise<T>): Promise<T> {
  const targets = (await (await fetch(`http://${inspector}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const socket = new WebSocket(targets[0]?.webSocketDebuggerUrl ?? "");
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let id = 0;
  const pending = new Map<number, (value: unknown) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  };
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      pending.set(++id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call("Profiler.enable");
  await call("Profiler.setSamplingInterval", { interval: 200 });
  await call("Profiler.start");
  const result = await work();
  const { profile } = (await call("Profiler.stop")) as {
    profile: { nodes: ProfileNode[]; samples: number[] };
  };
  socket.close();
  // BENCH_PROFILE_DIR=dir keeps each profile whole (a .cpuprofile, for Chrome's DevTools or a script).
  const keep = Deno.env.get("BENCH_PROFILE_DIR");
  if (keep) {
    const file = `${keep}/${new Date().toISOString().replaceAll(":", "-")}.cpuprofile`;
    await Deno.writeTextFile(file, JSON.stringify(profile));
    console.error(`profile: kept in ${file}`);
  }
  const self = new Map<number, number>();
  for (const sample of profile.samples) self.set(sample, (self.get(sample) ?? 0) + 1);
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url
      ? `${url.replace(/^.*\/(node_modules\/\.pnpm\/[^/]+\/node_modules\/)?/, "")}:${lineNumber + 1}`
      : "";
    const name = `${functionName || "(anonymous)"} ${where}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + (self.get(node.id) ?? 0));
  }
  // The same samples by where the code lives: a package, a workspace folder,
  // Deno's own runtime (ext:), or V8 (no URL: GC, idle, native ops).
  const byModule = new Map<string, number>();
  for (const node of profile.nodes) {
    const { url, functionName } = node.callFrame;
    const pkg = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    const workspace = /\/(apps\/[^/]+\/src\/[^/]+|packages\/[^/]+\/src)/.exec(url)?.[1];
    const module =
      pkg ??
      workspace ??
      (url.startsWith("ext:")
        ? url.split("/")[0]
        : url
          ? url
          : functionName.startsWith("op_")
            ? "(ops)"
            : functionName || "(native)");
    byModule.set(module, (byModule.get(module) ?? 0) + (self.get(node.id) ?? 0));
  }
  const total = profile.samples.length;
  const print = (title: string, counts: Map<string, number>, count: number) => {
    console.error(`profile: ${title}`);
    for (const [name, samples] of [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, count))
      console.error(`  ${((samples / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
  };
  // Who calls the six functions with the most self time: the callers' chain, three deep.
  const parent = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const label = (node: ProfileNode) =>
    `${node.callFrame.functionName || "(anonymous)"}${node.callFrame.url ? ` ${node.callFrame.url.split("/").at(-1)}:${node.callFrame.lineNumber + 1}` : ""}`;
  const callers = new Map<string, number>();
  const hot = new Set(
    [...byFunction.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([name]) => name),
  );
  for (const node of profile.nodes) {
    const samples = self.get(node.id) ?? 0;
    const name = label(node);
    if (!samples || !hot.has(name.replace(/ [^ ]+:(\d+)$/, (m) => m))) continue;
    const chain: string[] = [];
    for (let up = parent.get(node.id); up && chain.length < 3; up = parent.get(up.id)) chain.push(label(up));
    const key = `${name} <- ${chain.join(" <- ")}`;
    callers.set(key, (callers.get(key) ?? 0) + samples);
  }
  // Inclusive time of the workspace's own functions: each sample counts once for every distinct
  // workspace function on its stack (what a request's steps cost, callees included).
  const inclusive = new Map<string, number>();
  for (const node of profile.nodes) {
    const samples = self.get(node.id) ?? 0;
    if (!samples) continue;
    const seen = new Set<string>();
    for (let at: ProfileNode | undefined = node; at; at = parent.get(at.id)) {
      if (
        !/\/(apps|packages)\/[^/]+\/src\//.test(at.callFrame.url) ||
        at.callFrame.url.includes("node_modules")
      )
        continue;
      const name = label(at);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + samples);
    }
  }
  console.error(`profile: ${total} samples`);
  print("self time by function", byFunction, 30);
  print("self time by module", byModule, 25);
  print("callers of the top functions", callers, 25);
  print("inclusive time of the workspace's functions", inclusive, 40);
  return result;
}
