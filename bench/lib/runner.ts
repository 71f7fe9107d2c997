// Runs the built runner (`node apps/server/dist/corral.js runner`, what `pnpm runner` runs) as a child
// process beside a benchmark's server, on the registry in PostgreSQL.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const builtCorral = path.join(repo, "apps/server/dist/corral.js");

export interface RunningRunner {
  id: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * A runner claiming the jobs of agents labelled `label` from `databaseUrl`, its job logs in
 * `dataDir`, allowed to run in `workdirRoot`; resolved once it says it is running.
 */
export async function startRunner(databaseUrl: string, label: string, dataDir: string, workdirRoot: string): Promise<RunningRunner> {
  if (!existsSync(builtCorral)) throw new Error(`${builtCorral} is missing: run \`pnpm build\` first`);
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []), builtCorral, "runner"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: workdirRoot,
      CORRAL_DATABASE_URL: databaseUrl,
      CORRAL_RUNNER_LABELS: label,
      CORRAL_DATA_DIR: dataDir,
      CORRAL_WORKDIR_ROOTS: workdirRoot,
      CORRAL_LOG_LEVEL: "warn",
    },
  });
  let out = "";
  let err = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (err = (err + d).slice(-4000)));
  const id = await new Promise<string>((resolve, reject) => {
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const id = /Id: +(\S+)/.exec(out)?.[1];
      if (id) resolve(id);
    });
    child.once("exit", (code) => reject(new Error(`the runner exited with ${code} before it ran:\n${out}\n${err}`)));
  });
  return {
    id,
    pid: child.pid ?? 0,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      }),
  };
}
