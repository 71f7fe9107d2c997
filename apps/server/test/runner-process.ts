import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fakeBinDir } from "./helpers.js";

const corralEntry = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src/cli/main.ts");

export interface RunnerProcess {
  child: ChildProcess;
  /** The id it registered under, as it printed it. */
  id: string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once it has exited by itself. */
  exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM unless told) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

function spawnRunner(root: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "--conditions=corral-source", corralEntry, "runner"], {
    env: {
      ...process.env,
      HOME: root,
      PATH: `${fakeBinDir}${path.delimiter}${process.env.PATH ?? ""}`,
      CORRAL_DATA_DIR: path.join(root, "runner-data"),
      CORRAL_WORKDIR_ROOTS: root,
      CORRAL_KILL_GRACE_MS: "500",
      CORRAL_LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** `corral runner` as its own process (from source), resolved once it says it is running; rejects with its output if it exits first. */
export async function startRunnerProcess(root: string, env: Record<string, string>): Promise<RunnerProcess> {
  const child = spawnRunner(root, env);
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (/Id: +\S+/.test(out)) {
        child.stdout?.off("data", onData);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    void exited.then((code) => reject(new Error(`runner exited with ${code}:\n${out}\n${err}`)));
  });
  return {
    child,
    id: /Id: +(\S+)/.exec(out)?.[1] ?? "",
    stdout: () => out,
    stderr: () => err,
    exited,
    stop: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the runner expecting it to refuse to start: its exit code and output. */
export async function failedRunnerStart(root: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnRunner(root, env);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stdout, stderr };
}
