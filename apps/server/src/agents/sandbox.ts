import { inBubblewrap } from "./bubblewrap.js";
import { cliAdapterFor } from "./kind-lookup.js";
import type { Invocation } from "./types.js";
import type { AppConfig } from "../config.js";
import type { AgentRow } from "../db/schema.js";
import type { SandboxGit } from "../worktrees/sandbox-commits.js";

/** Where an agent's CLI keeps its tokens and sessions under home: writable in its sandbox, where home is read-only. */
export function stateDirsOf(agent: Pick<AgentRow, "kind" | "command">): readonly string[] {
  const adapter = cliAdapterFor(agent.kind);
  return adapter?.knownCommand?.(agent)?.stateDirs ?? adapter?.stateDirs ?? [];
}

/**
 * A CLI worker's invocation, wrapped in bubblewrap (agents/bubblewrap.ts) when its agent asks
 * for it, with its kind's state dirs writable, and a worktree job's own git folder (`git`).
 * `invocation.cwd` is the workdir's real path, resolved when the job started.
 */
export function sandboxed(invocation: Invocation, agent: AgentRow, config: AppConfig, git?: SandboxGit): Invocation {
  if (agent.sandbox === "none") return invocation;
  return inBubblewrap(invocation, agent.name, config, { stateDirs: stateDirsOf(agent), git });
}

/** In-process workers (Ollama) run inside Corral itself; a sandbox setting on them cannot be honoured. */
export function refuseInProcessSandbox(agent: AgentRow): void {
  if (agent.sandbox !== "none") {
    throw new Error(
      `agent ${agent.name} has sandbox "${agent.sandbox}", but ${agent.kind} agents run inside Corral (HTTP to the model, file tools confined to the workdir), not as a CLI process; set its sandbox to "none"`,
    );
  }
}
