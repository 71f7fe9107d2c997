import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fakeBinDir } from "./helpers.js";
import { registryEnv } from "./postgres.js";

const serverEntry = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src/server.ts");

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  /** Everything it printed so far. */
  stdout(): string;
  stderr(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface SpawnOptions {
  /** The umask the server starts with (a shell sets it, as a login shell would). */
  umask?: string;
  /** The file descriptors it may open (`ulimit -n`, soft and hard, so Node cannot raise it). */
  openFiles?: number;
}

/**
 * The real server as its own process, as `pnpm start` runs it (from source here), with stdout and
 * stderr piped. `root` is its HOME and workdir root; the data dir is `<root>/data` unless `env` says.
 */
function spawnServer(root: string, env: Record<string, string>, options: SpawnOptions): ChildProcess {
  const node = [process.execPath, "--import", "tsx", "--conditions=corral-source", serverEntry];
  const shell = [...(options.umask ? [`umask ${options.umask}`] : []), ...(options.openFiles ? [`ulimit -n ${options.openFiles}`] : [])];
  const [command, args] = shell.length
    ? ["/bin/sh", ["-c", `${shell.join(" && ")} && exec "$@"`, "sh", ...node]]
    : [node[0] as string, node.slice(1)];
  return spawn(command as string, args as string[], {
    env: {
      ...process.env,
      HOME: root,
      PATH: `${fakeBinDir}${path.delimiter}${process.env.PATH ?? ""}`,
      CORRAL_DATA_DIR: path.join(root, "data"),
      CORRAL_WORKDIR_ROOTS: root,
      CORRAL_PORT: "0",
      CORRAL_LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Starts the server and resolves once it printed where to open it; rejects with its output if it exits first. */
export async function startServerProcess(root: string, env: Record<string, string> = {}, options: SpawnOptions = {}): Promise<ServerProcess> {
  const child = spawnServer(root, { ...(await registryEnv(env.CORRAL_DATA_DIR ?? path.join(root, "data"))), ...env }, options);
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (out.includes("Open:")) {
        child.stdout?.off("data", onData);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}:\n${out}\n${err}`)));
  });
  const port = Number(/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return {
    child,
    port,
    stdout: () => out,
    stderr: () => err,
    stop: () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Runs the server expecting it to refuse to start: resolves with its exit code and output. */
export async function failedStart(root: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnServer(root, env, {});
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
    // It started after all: stop it, and let the caller's expectations say so.
    if (stdout.includes("Open:")) child.kill("SIGTERM");
  });
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stdout, stderr };
}
