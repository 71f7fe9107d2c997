import { spawn } from "node:child_process";
import type { Writable } from "node:stream";
import { inBubblewrap } from "../bubblewrap.js";
import { Refusal } from "../../lib/confined-files.js";
import { findExecutable } from "../../lib/find-executable.js";
import { bashEnv } from "../inherited-env.js";
import type { AppConfig } from "../../config.js";
import type { AgentRow } from "../../db/schema.js";
import type { SandboxGit } from "../../worktrees/sandbox-commits.js";

/** What a command runs with: the job's workdir and agent, and a worktree job's git folder in the sandbox. */
export interface BashContext {
  workdir: string;
  agent: AgentRow;
  config: AppConfig;
  signal: AbortSignal;
  sandboxGit?: SandboxGit;
}

/** One command may run this long before it is killed. */
const BASH_TIMEOUT_MS = 120_000;
/** stdout and stderr together, as the model sees them. */
const MAX_OUTPUT_CHARS = 32 * 1024;

/**
 * Runs a bash command for an API agent, only ever inside bubblewrap: the system read-only, the
 * workdir writable, no network and no Unix socket of the host, and an environment of the basics
 * and the agent's env only (agents/inherited-env.ts), without its API key. A machine
 * without a working bubblewrap refuses the call rather than running it unconfined.
 */
export async function runBash(command: string, { workdir, agent, config, signal, sandboxGit }: BashContext): Promise<string> {
  // The same PATH the sandbox looks bubblewrap up on.
  if (!findExecutable("bwrap", config.serverEnv.PATH)) {
    throw new Refusal("bash runs only inside the bubblewrap sandbox, and bubblewrap is not installed on the server (apt-get install bubblewrap)");
  }
  let invocation: ReturnType<typeof inBubblewrap>;
  try {
    // Whatever the agent's sandbox setting: an API agent runs inside the server, and only its commands can be confined.
    invocation = inBubblewrap({ command: "bash", args: ["-c", command], env: {}, cwd: workdir }, agent.name, config, {
      offline: true,
      git: sandboxGit,
    });
  } catch (err) {
    throw new Refusal(`bash runs only inside the bubblewrap sandbox: ${(err as Error).message}`);
  }
  return new Promise((resolve) => {
    const child = spawn(invocation.command, invocation.args, {
      cwd: workdir,
      env: { ...bashEnv(agent, config), ...invocation.env },
      detached: true,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    // bubblewrap's seccomp program; a child that could not start breaks the pipe, which the close below reports.
    const seccomp = child.stdio[3] as Writable | null;
    seccomp?.on("error", () => {});
    seccomp?.end(invocation.fd3, () => seccomp.destroy());
    let output = "";
    let cut = false;
    const take = (chunk: Buffer) => {
      if (cut) return;
      output += chunk.toString("utf8");
      if (output.length > MAX_OUTPUT_CHARS) {
        output = output.slice(0, MAX_OUTPUT_CHARS);
        cut = true;
      }
    };
    child.stdout?.on("data", take);
    child.stderr?.on("data", take);
    let why: string | null = null;
    const kill = (reason: string) => {
      why = reason;
      try {
        // Its own process group: bwrap and everything the command started go together.
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => kill(`killed after ${BASH_TIMEOUT_MS / 1000} s`), BASH_TIMEOUT_MS);
    const onAbort = () => kill("cancelled");
    signal.addEventListener("abort", onAbort, { once: true });
    const done = (status: string) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(`${output}${cut ? "\n[…output cut]" : ""}${output && !output.endsWith("\n") ? "\n" : ""}[${why ?? status}]`);
    };
    child.on("error", (err) => done(`could not start: ${err.message}`));
    child.on("close", (code, sig) => done(code === null ? `killed by ${sig}` : `exit status ${code}`));
  });
}
