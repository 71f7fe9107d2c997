// What listing the tools costs an orchestrator's context: the JSON of the `tools` array a client
// receives (what Claude Code with tool search off, Codex, OpenCode and Gemini CLI put before the
// model every turn), for one agent's mount and for /mcp with every built-in agent, in both
// protocol eras. The baseline is the same mount with `?options=all`: every launch option shown.
import { McpHttpClient } from "./lib/mcp-http.js";
import { startCorral } from "./lib/server.js";
import type { Benchmark, BenchRow } from "./lib/stats.js";

// /mcp: the delegating corral tools (about 3 KB) and each built-in agent's three (about 1.1 KB, ten
// agents); the toolsets (worktrees, hub, costs, ollama) only when a URL asks for them.
const BUDGETS = { "/mcp/gemini": 1400, "/mcp": 15_000 } as const;

async function toolsSize(url: string, token: string, modern: boolean): Promise<number> {
  const client = modern ? await McpHttpClient.modern(url, token) : await McpHttpClient.connect(url, token);
  try {
    return JSON.stringify((await client.rpc("tools/list")).tools).length;
  } finally {
    await client.close();
  }
}

export const mcpSize: Benchmark = {
  name: "mcp-size",
  async run() {
    const server = await startCorral();
    try {
      const rows: BenchRow[] = [];
      for (const [mount, budget] of Object.entries(BUDGETS)) {
        for (const modern of [false, true]) {
          const era = modern ? "2026-07-28" : "2025-11-25";
          rows.push({
            metric: `\`${mount}\` tools, ${era}`,
            corral: await toolsSize(`${server.url}${mount}`, server.token, modern),
            baseline: await toolsSize(`${server.url}${mount}?options=all`, server.token, modern),
            unit: "chars",
            target: { bound: "max", value: budget, rule: "the issue's budget" },
          });
        }
      }
      // What every toolset adds, without a budget: a user who picks them chose to pay for them.
      for (const modern of [false, true]) {
        rows.push({
          metric: `\`/mcp?toolsets=all\` tools, ${modern ? "2026-07-28" : "2025-11-25"}`,
          corral: await toolsSize(`${server.url}/mcp?toolsets=all`, server.token, modern),
          baseline: await toolsSize(`${server.url}/mcp?toolsets=all&options=all`, server.token, modern),
          unit: "chars",
        });
      }
      return {
        title: "`tools/list` size (characters of the tools array's JSON)",
        baseline: "The same mount with `?options=all` (every launch option shown).",
        rows,
        notes: ["2025-11-25 lists also mark `<agent>_run` as taking a task (`execution.taskSupport`); 2026-07-28 has tasks as an extension."],
      };
    } finally {
      await server.stop();
    }
  },
};
