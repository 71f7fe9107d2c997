// What a client is shown of the MCP surface (issue 28): titles and hints on every tool, the
// server's instructions, and schemas small enough that listing the tools costs little context.
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "./helpers.js";
import { connectMcp } from "./mcp-client.js";

let server: TestServer;
let all: Client;
let every: Client;
let gemini: Client;
beforeAll(async () => {
  server = await startServer();
  all = await connectMcp(server);
  every = await connectMcp(server, "/mcp?toolsets=all");
  gemini = await connectMcp(server, "/mcp/gemini");
});
afterAll(async () => {
  await Promise.all([all.close(), every.close(), gemini.close()]);
  await server.close();
});

/** A hint as a client reads it: a hint left out has the spec's default value. */
const DEFAULT_HINTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };
const hints = (tool: { annotations?: Record<string, unknown> } | undefined) => ({ ...DEFAULT_HINTS, ...tool?.annotations });

describe("tool annotations", () => {
  test("every tool has a title and hints; the readers read only and the cancel destroys", async () => {
    const tools = (await every.listTools()).tools;
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
    // The delegating corral tools (about 3 KB) and the built-in agents' three (about 1.1 KB each, ten agents).
    expect(await size(all)).toBeLessThanOrEqual(15_000);
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

describe("toolsets", () => {
  const names = async (client: Client) =>
    (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith("corral_") || n === "ollama_models");
  const DELEGATING = ["corral_agents", "corral_jobs", "corral_wait", "corral_cancel", "corral_logs", "corral_run_many"];

  test("/mcp shows the delegating tools; each toolset adds its own, and all adds every one", async () => {
    expect(await names(all)).toEqual(DELEGATING);
    const cases = [
      ["hub", ["corral_register", "corral_send", "corral_receive", "corral_read"]],
      ["costs", ["corral_costs"]],
      ["ollama", ["ollama_models"]],
      ["worktrees", ["corral_diff", "corral_merge", "corral_discard"]],
      ["hub,costs", ["corral_register", "corral_send", "corral_receive", "corral_read", "corral_costs"]],
    ] as const;
    for (const [toolsets, added] of cases) {
      const client = await connectMcp(server, `/mcp?toolsets=${toolsets}`);
      try {
        expect((await names(client)).sort(), toolsets).toEqual([...DELEGATING, ...added].sort());
      } finally {
        await client.close();
      }
    }
    expect((await names(every)).length).toBe(DELEGATING.length + 4 + 1 + 1 + 3);
  });

  test("the worktrees toolset shows the worktree and base options, and its instructions say how to review", async () => {
    const client = await connectMcp(server, "/mcp?toolsets=worktrees", server.auth, "modern");
    try {
      const tools = (await client.listTools()).tools;
      for (const name of ["gemini_run", "gemini_run_async", "corral_run_many"]) {
        const props = Object.keys(tools.find((t) => t.name === name)?.inputSchema.properties ?? {});
        expect(props, name).toEqual(expect.arrayContaining(["worktree", "base"]));
        expect(props, name).not.toContain("timeout_s");
      }
      expect(client.getInstructions()).toMatch(/worktree: true.*corral_diff/);
    } finally {
      await client.close();
    }
    expect(all.getInstructions()).not.toMatch(/worktree|corral_register/);
    expect(every.getInstructions()).toMatch(/corral_register/);
  });

  test("a tool of a toolset the URL does not show is refused naming the URL that shows it, in both eras", async () => {
    for (const era of ["legacy", "modern"] as const) {
      const client = await connectMcp(server, "/mcp", server.auth, era);
      try {
        await expect(client.callTool({ name: "corral_costs", arguments: {} }), era).rejects.toThrow(
          /corral_costs is in the costs toolset, which this URL does not show: add \?toolsets=costs/,
        );
        await expect(client.callTool({ name: "corral_nothing", arguments: {} }), era).rejects.toThrow(/corral_nothing not found/);
      } finally {
        await client.close();
      }
    }
    await expect(gemini.callTool({ name: "corral_register", arguments: { name: "a", session: "b" } })).rejects.toThrow(
      /corral_register is on \/mcp\?toolsets=hub, not on \/mcp\/gemini/,
    );
    // Shown, it answers as itself.
    expect(JSON.stringify((await every.callTool({ name: "corral_costs", arguments: { days: 1 } })).content)).toMatch(/provider|no usage|\$/i);
  });

  test("a bad toolsets value is refused naming the choices; a session stays on the URL it opened", async () => {
    const post = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/mcp${query}`, {
        method: "POST",
        headers: { ...server.auth, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
    for (const [query, error] of [
      ["?toolsets=hubb", /toolsets: "hubb" is not a toolset; choose from worktrees, hub, costs, ollama or all/],
      ["?toolsets=", /toolsets: "" is not a toolset/],
      ["?toolsets=all,hubb", /toolsets: "hubb" is not a toolset/],
      ["?toolsets=constructor", /toolsets: "constructor" is not a toolset/],
      [`?toolsets=${"x".repeat(5000)}%0A`, /toolsets: "x{40}" is not a toolset/],
      ["?toolsets=hub&toolsets=costs", /toolsets: give it once, names separated by commas/],
      ["/gemini?toolsets=hub", /toolsets: only \/mcp has toolsets; an agent's own mount/],
      ["?tools=hub", /unknown query parameter "tools": .*toolsets=worktrees,hub,costs,ollama \(or all\)/],
      [`?${"k".repeat(5000)}=1`, /unknown query parameter "k{40}": /],
    ] as const) {
      const res = await post(query);
      expect(res.status, query).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message, query).toMatch(error);
    }
    const hub = await connectMcp(server, "/mcp?toolsets=hub", server.auth, "legacy");
    try {
      const sessionId = (hub as unknown as { transport: { sessionId?: string } }).transport.sessionId ?? "";
      expect(sessionId).not.toBe("");
      const elsewhere = await post("?toolsets=costs", { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
      expect(elsewhere.status).toBe(404);
      expect(await elsewhere.text()).toMatch(/session not found on this URL: it was opened on another/);
      const same = await post("?toolsets=hub", { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
      expect(same.status).toBe(200);
    } finally {
      await hub.close();
    }
  });
});
