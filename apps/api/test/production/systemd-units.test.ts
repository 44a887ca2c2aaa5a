// The service units (deploy/systemd/, issue 51 item 2): `systemd-analyze
// verify` finds nothing to say about them (no unknown key, no value it cannot
// parse; it exits 0 on those, so its output must be empty too), their
// hardening scores low with `systemd-analyze security --offline`, and their
// limits follow the code: LimitNOFILE above MAX_CONNECTIONS' default and
// TimeoutStopSec above the shutdown deadline (SHUTDOWN_TIMEOUT_SECONDS' default
// and the last second main.ts gives the database), read from config/.
//
// verify needs ExecStart's executable to exist: each unit is rendered into a
// temporary directory with /opt/sms-api/bin/sms-api replaced by an executable
// there. systemd-analyze is Debian's `systemd` package; where it is absent
// those cases are skipped with a warning, and under CI that is an error.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseEnv } from "../../src/config/index.ts";
import { debianToolAvailable } from "../support/debian-tool.ts";

const UNITS_DIR = join(import.meta.dirname, "../../../../deploy/systemd");
const EXECUTABLE = "/opt/sms-api/bin/sms-api";
const UNITS = [
  { file: "sms-api.service", execStart: EXECUTABLE },
  { file: "sms-worker.service", execStart: `${EXECUTABLE} --role=worker` },
] as const;
/** The most `systemd-analyze security` may rate the units' exposure (0 safest, 10 most exposed). */
const MAX_EXPOSURE = 2;

const systemdAnalyzeAvailable = () =>
  debianToolAvailable("/usr/bin/systemd-analyze", "systemd-analyze's checks of the service units", "systemd");

/** A unit file's `Key=value` lines by section (a key given twice keeps every value, in order). */
function parseUnit(text: string): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1] ?? "";
      continue;
    }
    const index = line.indexOf("=");
    if (index < 0) throw new Error(`not a Key=value line: ${line}`);
    const key = `${section}.${line.slice(0, index)}`;
    keys.set(key, [...(keys.get(key) ?? []), line.slice(index + 1)]);
  }
  return keys;
}

const config = parseEnv({});
/** Behind HAProxy docs/deploy.md sets the readiness delay to 5 s: the stop takes that long first. */
const proxied = parseEnv({ SHUTDOWN_READINESS_DELAY_SECONDS: "5" });

describe.each(UNITS)("deploy/systemd/$file", ({ file, execStart }) => {
  const text = readFileSync(join(UNITS_DIR, file), "utf8");
  const unit = parseUnit(text);
  const one = (key: string) => {
    const values = unit.get(`Service.${key}`) ?? [];
    expect(values, key).toHaveLength(1);
    return values[0] ?? "";
  };

  it("runs the release's executable as its own user, with the environment file, restarted on failure", () => {
    expect(one("ExecStart")).toBe(execStart);
    expect(one("User")).toBe("sms-api");
    expect(one("EnvironmentFile")).toBe("/etc/sms-api/sms-api.env");
    expect(one("Restart")).toBe("on-failure");
    expect(one("KillSignal")).toBe("SIGTERM");
    // Only the main process is signalled: a second SIGTERM would force the shutdown at once (main.ts).
    expect(one("KillMode")).toBe("mixed");
    expect(unit.get("Install.WantedBy")).toEqual(["multi-user.target"]);
  });

  it("is hardened: a read-only system but its state directory, no new privileges, no capabilities", () => {
    expect(one("ProtectSystem")).toBe("strict");
    expect(one("NoNewPrivileges")).toBe("yes");
    expect(one("StateDirectory")).toBe("sms-api");
    expect(one("ProtectHome")).toBe("yes");
    expect(one("PrivateTmp")).toBe("yes");
    expect(one("CapabilityBoundingSet")).toBe("");
    // Where PGlite keeps its data (the API's default) is inside the state directory.
    for (const setting of unit.get("Service.Environment") ?? []) {
      if (setting.startsWith("PGLITE_DATA_DIR="))
        expect(setting).toMatch(/^PGLITE_DATA_DIR=\/var\/lib\/sms-api\//);
    }
  });

  it("allows more descriptors than MAX_CONNECTIONS' default, and waits longer than the shutdown deadline", () => {
    expect(Number(one("LimitNOFILE"))).toBeGreaterThan(config.http.maxConnections);
    // main.ts: SHUTDOWN_READINESS_DELAY_SECONDS (5 behind the proxy), SHUTDOWN_TIMEOUT_SECONDS, then one more
    // second for the database, then exit.
    const deadlineSeconds = (proxied.shutdownReadinessDelayMs + proxied.shutdownTimeoutMs) / 1000 + 1;
    expect(Number(one("TimeoutStopSec"))).toBeGreaterThan(deadlineSeconds);
  });
});

describe.runIf(systemdAnalyzeAvailable())("systemd-analyze and the service units", () => {
  const dir = mkdtempSync(join(tmpdir(), "sms-units-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const executable = join(dir, "sms-api");
  writeFileSync(executable, "#!/bin/sh\nexit 0\n");
  chmodSync(executable, 0o755);

  /** The unit with its executable at `executable`, written into the temporary directory. */
  function rendered(file: string, text = readFileSync(join(UNITS_DIR, file), "utf8")): string {
    expect(text).toContain(EXECUTABLE);
    const path = join(dir, file);
    writeFileSync(path, text.replaceAll(EXECUTABLE, executable));
    return path;
  }
  const analyze = (...args: string[]) => {
    const run = spawnSync("systemd-analyze", args, { encoding: "utf8", timeout: 60_000 });
    return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
  };

  it.each(UNITS.map((unit) => unit.file))("systemd-analyze verify %s: no error, no warning", (file) => {
    expect(analyze("verify", "--man=no", rendered(file))).toEqual({ status: 0, output: "" });
  });

  it("systemd-analyze verify is heard: it warns of an unknown key, and fails on a missing executable", () => {
    const text = readFileSync(join(UNITS_DIR, "sms-api.service"), "utf8");
    const misspelt = analyze(
      "verify",
      "--man=no",
      rendered("misspelt.service", text.replace("NoNewPrivileges=", "NoNewPrivilege=")),
    );
    expect(misspelt.output).toContain("Unknown key 'NoNewPrivilege'");
    const path = join(dir, "missing.service");
    writeFileSync(path, text.replaceAll(EXECUTABLE, join(dir, "no-such-executable")));
    expect(analyze("verify", "--man=no", path).status).not.toBe(0);
  });

  it.each(UNITS.map((unit) => unit.file))(
    `systemd-analyze security %s: exposure at most ${MAX_EXPOSURE}`,
    (file) => {
      const run = analyze("security", "--offline=yes", "--no-pager", rendered(file));
      const exposure = /Overall exposure level for \S+: ([\d.]+)/.exec(run.output)?.[1];
      expect(exposure, run.output).toBeDefined();
      expect(Number(exposure)).toBeLessThanOrEqual(MAX_EXPOSURE);
    },
  );

  it("the worker refuses to start without DATABASE_URL (PGlite is one process's database)", () => {
    const unit = parseUnit(readFileSync(join(UNITS_DIR, "sms-worker.service"), "utf8"));
    const [pre] = unit.get("Service.ExecStartPre") ?? [];
    // systemd turns $$ into $ before running it.
    const script = /^\/bin\/sh -c '(.*)'$/.exec(pre ?? "")?.[1]?.replaceAll("$$", "$");
    expect(script).toBeDefined();
    const check = (env: Record<string, string>) =>
      spawnSync("/bin/sh", ["-c", script ?? "false"], { env: { PATH: "/usr/bin:/bin", ...env } }).status;
    expect(check({})).not.toBe(0);
    expect(check({ DATABASE_URL: "" })).not.toBe(0);
    expect(check({ DATABASE_URL: "postgresql://db/sms" })).toBe(0);
  });
});
