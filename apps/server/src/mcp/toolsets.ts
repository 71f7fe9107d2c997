import { RARE_LAUNCH_OPTIONS } from "./launch-input.js";

/**
 * The `/mcp` tools a client is shown beyond those that delegate (every agent's three tools and
 * `corral_agents`, `_jobs`, `_wait`, `_cancel`, `_logs`, `_run_many`), by the name a URL picks them
 * with: `/mcp?toolsets=worktrees,hub` or `?toolsets=all`. Orchestrators put every listed tool
 * before their model on every turn, so what most of them never call is left out unless asked for.
 */
export const TOOLSETS = {
  worktrees: {
    tools: ["corral_diff", "corral_merge", "corral_discard"],
    /** Launch options shown with the set: what its tools review. */
    options: ["worktree", "base"],
    about: "a git worktree per job (the worktree and base launch options) and its review",
  },
  hub: {
    tools: ["corral_register", "corral_send", "corral_receive", "corral_read"],
    options: [],
    about: "conversations: agents that message each other",
  },
  costs: { tools: ["corral_costs"], options: [], about: "tokens and USD spent, and the budgets" },
  ollama: { tools: ["ollama_models"], options: [], about: "an Ollama server's models and their probes" },
} as const satisfies Record<string, { tools: readonly string[]; options: readonly (typeof RARE_LAUNCH_OPTIONS)[number][]; about: string }>;

export type Toolset = keyof typeof TOOLSETS;
export const TOOLSET_NAMES = Object.keys(TOOLSETS) as Toolset[];

/** What an MCP URL shows: the tools of one agent or of all, which toolsets, which launch options. */
export interface McpMount {
  /** Null: every agent plus the corral tools (`/mcp`); else that agent's tools only. */
  agent: string | null;
  /** `?options=all`: the launch tools' schemas show every option, not only the common ones. */
  showAll: boolean;
  /** `?toolsets=`: the toolsets `/mcp` shows beside the delegating tools. */
  toolsets: ReadonlySet<Toolset>;
}

/** Parses `?toolsets=`: names separated by commas, or `all`; an error names the choices. */
export function parseToolsets(value: unknown, agent: string | null): ReadonlySet<Toolset> | string {
  if (value === undefined) return new Set();
  const choices = `${TOOLSET_NAMES.join(", ")} or all`;
  if (typeof value !== "string") return `toolsets: give it once, names separated by commas (${choices})`;
  if (agent !== null)
    return "toolsets: only /mcp has toolsets; an agent's own mount (/mcp/<agent>) serves its three tools (options=all shows every launch option)";
  const names = value.split(",").map((name) => name.trim());
  const unknown = names.find((name) => name !== "all" && !Object.hasOwn(TOOLSETS, name));
  // Quoted and cut: the name is the caller's, and goes back into an error it may log.
  if (unknown !== undefined) return `toolsets: ${JSON.stringify(unknown.slice(0, 40))} is not a toolset; choose from ${choices}`;
  return new Set(names.includes("all") ? TOOLSET_NAMES : (names as Toolset[]));
}

/** The rare launch options a mount shows anyway: all with `options=all`, else its toolsets'. */
export function shownOptions(mount: McpMount): readonly string[] {
  if (mount.showAll) return RARE_LAUNCH_OPTIONS;
  return [...mount.toolsets].flatMap((set) => TOOLSETS[set].options);
}

/** Whether two URLs show the same tools and schemas (a session stays on the URL it opened). */
export function sameMount(a: McpMount, b: McpMount): boolean {
  return a.agent === b.agent && a.showAll === b.showAll && a.toolsets.size === b.toolsets.size && [...a.toolsets].every((s) => b.toolsets.has(s));
}

/**
 * Why a tool is not on this mount when it is a toolset's, and how to show it: a model that read
 * of `corral_costs` in the docs learns which URL has it, not only "not found".
 */
export function hiddenToolReason(tool: string, mount: McpMount): string | undefined {
  const set = TOOLSET_NAMES.find((name) => (TOOLSETS[name].tools as readonly string[]).includes(tool));
  if (set === undefined || (mount.agent === null && mount.toolsets.has(set))) return undefined;
  return mount.agent === null
    ? `${tool} is in the ${set} toolset, which this URL does not show: add ?toolsets=${set} (or toolsets=all) to the MCP URL`
    : `${tool} is on /mcp?toolsets=${set}, not on /mcp/${mount.agent} (an agent's mount serves its three tools)`;
}
