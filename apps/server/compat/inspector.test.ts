// MCP Inspector's CLI (`--cli <url> --transport http --method …`) against Corral's /mcp: tools/list,
// and tools/call of an agent's tools with arguments converted from `--tool-arg k=v`. Run with the
// pinned 0.15.0 on Node 20 and with 2.x on Node 24, that one once per protocol era Corral serves.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../test/helpers.js";
import { cleanEnv, describeRun, runClient } from "./lib/clients.js";
import { startHeaderProxy, type HeaderProxy } from "./lib/header-proxy.js";
import { inspectorClis } from "./lib/inspector.js";

interface ToolsList {
  tools: { name: string; inputSchema: { properties?: Record<string, unknown>; required?: string[] } }[];
}
interface CallResult {
  content: { type: string; text: string }[];
  isError?: boolean;
}

for (const cli of inspectorClis()) {
  describe(`MCP Inspector ${cli.label} CLI`, () => {
    let server: TestServer;
    let proxy: HeaderProxy | undefined;

    /** Where the Inspector connects with the token: the server itself, or the proxy that adds the header. */
    const url = (mount = "/mcp") => `${proxy?.url ?? server.url}${mount}`;
    const inspector = (target: string, token: string | null, args: string[]) =>
      cli.run(target, token, args, { cwd: server.root, home: path.join(server.root, "home") });

    async function call(tool: string, args: Record<string, string>, mount = "/mcp"): Promise<CallResult> {
      const toolArgs = Object.entries(args).map(([k, v]) => `${k}=${v}`);
      const { run, result } = await inspector(url(mount), server.token, ["--method", "tools/call", "--tool-name", tool, "--tool-arg", ...toolArgs]);
      const answer = result as CallResult | undefined;
      expect(answer?.content, describeRun(run)).toBeInstanceOf(Array);
      expect(run.code, describeRun(run)).toBe(answer?.isError ? cli.toolErrorExit : 0);
      return answer as CallResult;
    }

    beforeAll(async () => {
      server = await startServer();
      if (!cli.sendsHeaders) proxy = await startHeaderProxy(server.url, { name: "authorization", value: `Bearer ${server.token}` });
    });

    afterAll(async () => {
      await proxy?.close();
      await server?.close();
    });

    it(`runs on Node ${cli.build.node}`, async () => {
      const run = await runClient("node", ["--version"], { cwd: server.root, env: cleanEnv(path.join(server.root, "home"), {}, cli.build.path) });
      expect(run.stdout.trim(), describeRun(run)).toBe(cli.build.node);
    });

    it("tools/list shows every agent's three tools and the corral_* tools, with input schemas", async () => {
      const { run, result } = await inspector(url(), server.token, ["--method", "tools/list"]);
      expect(run.code, describeRun(run)).toBe(0);
      const { tools } = result as ToolsList;
      const names = tools.map((t) => t.name);
      for (const agent of ["gemini", "opencode", "claude", "codex"]) {
        expect(names).toEqual(expect.arrayContaining([`${agent}_run`, `${agent}_run_async`, `${agent}_done`]));
      }
      expect(names).toEqual(expect.arrayContaining(["corral_agents", "corral_jobs", "corral_wait", "corral_cancel", "corral_logs"]));
      const runAsync = tools.find((t) => t.name === "gemini_run_async");
      expect(runAsync?.inputSchema.required).toEqual(["prompt"]);
      // The common options; ?options=all shows the others (timeouts, budgets, retries, a shared workdir).
      expect(Object.keys(runAsync?.inputSchema.properties ?? {})).toEqual(["prompt", "workdir", "model", "session"]);
      if (proxy) expect(proxy.seen.some((line) => line.startsWith("POST /mcp"))).toBe(true);
      const all = await inspector(url("/mcp?options=all"), server.token, ["--method", "tools/list"]);
      const shown = (all.result as ToolsList).tools.find((t) => t.name === "gemini_run_async");
      expect(Object.keys(shown?.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(["prompt", "workdir", "timeout_s", "max_cost_usd", "retry"]),
      );
    });

    it("tools/call: gemini_run runs a job to the end, gemini_done then says listo, corral_jobs lists it", async () => {
      const workdir = path.join(server.root, "jobs", "from-inspector");
      // timeout_s goes through the Inspector's schema-driven conversion from text to a number: the
      // mount that shows every option gives it the schema to convert by.
      const ran = await call("gemini_run", { prompt: "write note.txt from the inspector", workdir, timeout_s: "60" }, "/mcp?options=all");
      expect(ran.isError ?? false, JSON.stringify(ran)).toBe(false);
      const text = ran.content[0]?.text ?? "";
      expect(text.split("\n")[0]).toBe("ok");
      const jobId = /job (\S+)/.exec(text)?.[1];
      expect(jobId, text).toBeTruthy();
      expect(readFileSync(path.join(workdir, "note.txt"), "utf8")).toBe("from the inspector");

      const done = await call("gemini_done", { job_id: jobId ?? "" });
      expect(done.content[0]?.text.split("\n")[0]).toBe("listo");

      const jobs = await call("corral_jobs", { agent: "gemini" });
      expect(jobs.content[0]?.text).toContain(jobId);
    });

    it("tools/call of an unknown job id answers an MCP error result, not a crash", async () => {
      const done = await call("gemini_done", { job_id: "no-such-job" });
      expect(done.isError).toBe(true);
      expect(done.content[0]?.text).toBe("error: job no-such-job no encontrado");
    });

    it("without the token (no header, no proxy), the Inspector cannot connect", async () => {
      const { run } = await inspector(`${server.url}/mcp`, null, ["--method", "tools/list"]);
      expect(run.code, describeRun(run)).not.toBe(0);
      expect(`${run.stdout}${run.stderr}`).toMatch(/401|missing token/i);
    });
  });
}
