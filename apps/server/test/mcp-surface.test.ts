// What a client is shown of the MCP surface (issue 28): titles and hints on every tool, the
// server's instructions, and schemas small enough that listing the tools costs little context.
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "./helpers.js";
import { connectMcp } from "./mcp-client.js";

let server: TestServer;
let all: Client;
let gemini: Client;
beforeAll(async () => {
  server = await startServer();
  all = await connectMcp(server);
  gemini = await connectMcp(server, "/mcp/gemini");
});
afterAll(async () => {
  await all.close();
  await gemini.close();
  await server.close();
});

/** A hint as a client reads it: a hint left out has the spec's default value. */
const DEFAULT_HINTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
const hints = (tool: { annotations?: Record<string, unknown> } | undefined) => ({ ...DEFAULT_HINTS, ...tool?.annotations });

describe("tool annotations", () => {
  test("every tool has a title and hints; the readers read only and the cancel destroys", async () => {
    const tools = (await all.listTools()).tools;
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const tool of tools) {
      expect(tool.title, tool.name).toMatch(/\S/);
      expect(tool.annotations, tool.name).toBeDefined();
    }
    for (const name of [
      "gemini_done",
      "corral_wait",
      "corral_logs",
      "corral_agents",
      "corral_jobs",
      "corral_costs",
      "corral_read",
      "ollama_models",
    ]) {
      expect(hints(byName.get(name)).readOnlyHint, name).toBe(true);
    }
    expect(hints(byName.get("corral_cancel"))).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    for (const name of ["gemini_run", "gemini_run_async", "corral_run_many"]) {
      expect(hints(byName.get(name)), name).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      });
    }
    const agentTools = (await gemini.listTools()).tools;
    expect(agentTools.map((t) => [t.name, hints(t).readOnlyHint])).toEqual([
      ["gemini_run", false],
      ["gemini_run_async", false],
      ["gemini_done", true],
    ]);
  });
});

describe("instructions", () => {
  test("say what Corral is, the async flow and one agent per file, in under 2,000 characters", () => {
    for (const [client, run, done] of [
      [all, "<agent>_run_async", "<agent>_done"],
      [gemini, "gemini_run_async", "gemini_done"],
    ] as const) {
      const text = client.getInstructions() ?? "";
      expect(text.length).toBeLessThan(2000);
      expect(text).toMatch(/^Corral runs coding agents/);
      expect(text).toContain(run);
      expect(text).toContain("corral_wait");
      expect(text).toContain(done);
      expect(text.indexOf(run)).toBeLessThan(text.indexOf("corral_wait"));
      expect(text).toMatch(/one agent per file/i);
      expect(text).toMatch(/never let two agents write the same file/i);
    }
  });
});

describe("lean schemas", () => {
  /** The budget is measured on what a client receives: the JSON of the `tools` array. */
  const size = async (client: Client) => JSON.stringify((await client.listTools()).tools).length;

  test("an agent's three tools and all of /mcp fit their budgets; no bound, no $schema, no hidden option is shown", async () => {
    expect(await size(gemini)).toBeLessThanOrEqual(1400);
    // The corral tools (about 6 KB with the worktree review's three) and the built-in agents' (about 1.2 KB each, eleven with agy and copilot).
    expect(await size(all)).toBeLessThanOrEqual(19_000);
    const text = JSON.stringify((await all.listTools()).tools);
    for (const keyword of ["maxLength", "maximum", "minLength", "minimum", "pattern", "$schema", "additionalProperties"]) {
      expect(text, keyword).not.toContain(`"${keyword}"`);
    }
    const run = (await gemini.listTools()).tools.find((t) => t.name === "gemini_run");
    expect(Object.keys(run?.inputSchema.properties ?? {})).toEqual(["prompt", "workdir", "model", "session"]);
  });

  test("?options=all shows every launch option; the server takes them on every mount", async () => {
    const full = await connectMcp(server, "/mcp/gemini?options=all");
    try {
      const run = (await full.listTools()).tools.find((t) => t.name === "gemini_run");
      expect(Object.keys(run?.inputSchema.properties ?? {})).toEqual([
        "prompt",
        "workdir",
        "model",
        "timeout_s",
        "max_cost_usd",
        "max_tokens",
        "retry",
        "shared_workdir",
        "worktree",
        "base",
        "session",
      ]);
      // Still lean: the bounds are the server's to check.
      expect(JSON.stringify(run)).not.toContain("maximum");
    } finally {
      await full.close();
    }
    // A hidden option is still taken, and still checked with the error naming the field.
    const refused = await gemini.callTool({ name: "gemini_run_async", arguments: { prompt: "x", timeout_s: 0 } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/timeout_s/);
    const bad = await fetch(`${server.url}/mcp?options=some`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/json" },
      body: "{}",
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/options: the only value is all/);
  });
});
