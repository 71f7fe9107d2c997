// MCP Inspector 0.15.0's CLI (`--cli <url> --transport http --method …`) against Corral's /mcp:
// tools/list, and tools/call of an agent's tools with arguments converted from `--tool-arg k=v`.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../test/helpers.js";
import { cleanEnv, clientBin, describeRun, runClient } from "./lib/clients.js";
import { startHeaderProxy, type HeaderProxy } from "./lib/header-proxy.js";

let server: TestServer;
let proxy: HeaderProxy;

interface ToolsList {
  tools: { name: string; inputSchema: { properties?: Record<string, unknown>; required?: string[] } }[];
}
interface CallResult {
  content: { type: string; text: string }[];
  isError?: boolean;
}

const inspector = (url: string, args: string[]) =>
  runClient(clientBin("mcp-inspector"), ["--cli", url, "--transport", "http", ...args], {
    cwd: server.root,
    env: cleanEnv(path.join(server.root, "home")),
    timeoutMs: 60_000,
  });

async function call(tool: string, args: Record<string, string>): Promise<CallResult> {
  const toolArgs = Object.entries(args).map(([k, v]) => `${k}=${v}`);
  const run = await inspector(`${proxy.url}/mcp`, ["--method", "tools/call", "--tool-name", tool, "--tool-arg", ...toolArgs]);
  expect(run.code, describeRun(run)).toBe(0);
  return JSON.parse(run.stdout) as CallResult;
}

beforeAll(async () => {
  server = await startServer();
  proxy = await startHeaderProxy(server.url, { name: "authorization", value: `Bearer ${server.token}` });
});

afterAll(async () => {
  await proxy?.close();
  await server?.close();
});

describe("MCP Inspector 0.15.0 CLI", () => {
  it("tools/list shows every agent's three tools and the corral_* tools, with input schemas", async () => {
    const run = await inspector(`${proxy.url}/mcp`, ["--method", "tools/list"]);
    expect(run.code, describeRun(run)).toBe(0);
    const { tools } = JSON.parse(run.stdout) as ToolsList;
    const names = tools.map((t) => t.name);
    for (const agent of ["gemini", "opencode", "claude", "codex"]) {
      expect(names).toEqual(expect.arrayContaining([`${agent}_run`, `${agent}_run_async`, `${agent}_done`]));
    }
    expect(names).toEqual(expect.arrayContaining(["corral_agents", "corral_jobs", "corral_wait", "corral_cancel", "corral_logs"]));
    const runAsync = tools.find((t) => t.name === "gemini_run_async");
    expect(runAsync?.inputSchema.required).toEqual(["prompt"]);
    expect(Object.keys(runAsync?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["prompt", "workdir", "model", "timeout_s"]));
    expect(proxy.seen.some((line) => line.startsWith("POST /mcp"))).toBe(true);
  });

  it("tools/call: gemini_run runs a job to the end, gemini_done then says listo, corral_jobs lists it", async () => {
    const workdir = path.join(server.root, "jobs", "from-inspector");
    // timeout_s goes through the Inspector's schema-driven conversion from text to a number.
    const ran = await call("gemini_run", { prompt: "write note.txt from the inspector", workdir, timeout_s: "60" });
    expect(ran.isError ?? false, JSON.stringify(ran)).toBe(false);
    const text = ran.content[0]?.text ?? "";
    expect(text.split("\n")[0]).toBe("ok");
    const jobId = /job (\S+)/.exec(text)?.[1];
    expect(jobId, text).toBeTruthy();
    expect(readFileSync(path.join(workdir, "note.txt"), "utf8")).toBe("from the inspector");

    const done = await call("gemini_done", { job_id: jobId! });
    expect(done.content[0]?.text.split("\n")[0]).toBe("listo");

    const jobs = await call("corral_jobs", { agent: "gemini" });
    expect(jobs.content[0]?.text).toContain(jobId!);
  });

  it("tools/call of an unknown job id answers an MCP error result, not a crash", async () => {
    const done = await call("gemini_done", { job_id: "no-such-job" });
    expect(done.isError).toBe(true);
    expect(done.content[0]?.text).toBe("error: job no-such-job no encontrado");
  });

  it("without the token (no proxy), the Inspector cannot connect", async () => {
    const run = await inspector(`${server.url}/mcp`, ["--method", "tools/list"]);
    expect(run.code, describeRun(run)).not.toBe(0);
    expect(`${run.stdout}${run.stderr}`).toMatch(/401|missing token/i);
  });
});
