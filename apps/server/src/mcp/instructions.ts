import type { McpMount } from "./toolsets.js";

/**
 * What the server tells a client on `initialize` (MCP `instructions`), which most clients put in the
 * model's context: so it is short, and says only what the tool list cannot.
 */
export function instructionsFor(mount: McpMount): string {
  const { agent } = mount;
  const run = agent ? `${agent}_run_async` : "<agent>_run_async";
  const done = agent ? `${agent}_done` : "<agent>_done";
  const wait = agent ? `corral_wait (on the /mcp mount)` : "corral_wait";
  return [
    "Corral runs coding agents (CLI workers such as claude, codex, gemini, opencode, kiro) as background jobs on this machine, so you can delegate tasks to them.",
    `For anything longer than a minute: start it with ${run}, which returns a job id; wait for several ids at once with ${wait}; then read each answer with ${done} (ok/error, files, output tail). <agent>_run does the same in one call but blocks.`,
    "Give each job its own workdir or files: one agent per file. Never let two agents write the same file at the same time; Corral refuses a second job in a busy workdir unless shared_workdir is set.",
    ...(mount.toolsets.has("worktrees")
      ? [
          "Several agents on one git repository: pass worktree: true (and base) so each works in its own worktree on branch corral/<job id>; the answers give its commits and diff stat, corral_diff the diff, corral_merge or corral_discard end it.",
        ]
      : []),
    ...(mount.toolsets.has("hub")
      ? [
          "To talk with other agents: corral_register in a session, then corral_send, corral_receive and corral_read with the handle it returns.",
          'If you were started with this server as a channel (--dangerously-load-development-channels server:<its name>), register with push: true: messages to you then arrive as <channel source="corral"> events, and job ends as kind="job_end"; answer a message with corral_send.',
        ]
      : []),
  ].join("\n");
}
