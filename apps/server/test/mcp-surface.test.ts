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
      expect(byName.get(name)?.annotations?.readOnlyHint, name).toBe(true);
    }
    expect(byName.get("corral_cancel")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    for (const name of ["gemini_run", "gemini_run_async", "corral_run_many"]) {
      expect(byName.get(name)?.annotations, name).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: true });
    }
    const agentTools = (await gemini.listTools()).tools;
    expect(agentTools.map((t) => [t.name, t.annotations?.readOnlyHint])).toEqual([
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
