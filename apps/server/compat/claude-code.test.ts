// Claude Code as the orchestrator, each version the suite pins (2.1.197, and today's 2.1.332): it
// connects to Corral's MCP endpoints the way users set it up (`claude mcp add --transport http …
// --header`), and in `claude -p` a scripted model launches a job, waits for it and reads `listo`,
// through the real tool-calling loop. 2.1.332 defers MCP tools behind its tool search, so there the
// fake model selects each tool before calling it.
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../test/fixtures/fake-llm/anthropic.js";
import type { FakeServer, RecordedRequest, Turn } from "../test/fixtures/fake-llm/script.js";
import { api, startServer, type TestServer } from "../test/helpers.js";
import { lastToolResults, offeredTools, toolResultsIn, usedToolSearch } from "./lib/anthropic-transcript.js";
import { claudeEnv, clientBuilds, describeRun, runClient } from "./lib/clients.js";
import { type HeaderProxy, startHeaderProxy } from "./lib/header-proxy.js";

/** Whether a version shows the model MCP tools only through its tool search (checked, so the fake's search path is run). */
const DEFERS_MCP_TOOLS: Record<string, boolean> = { "2.1.197": false, "2.1.332": true };
/** The MCP revision each version speaks to Corral: 2.1.332 negotiates 2026-07-28 with `server/discover`. */
const SPEAKS: Record<string, "2025-11-25" | "2026-07-28"> = { "2.1.197": "2025-11-25", "2.1.332": "2026-07-28" };

for (const build of clientBuilds("claude")) {
  describe(`Claude Code ${build.label}`, () => {
    let server: TestServer;
    /** Between Claude Code and `/mcp`: records which era each request spoke. */
    let recorder: HeaderProxy;
    let home: string;
    let project: string;

    const claude = (args: string[], apiUrl: string | null = null) =>
      runClient(build.bin, args, { cwd: project, env: claudeEnv(home, apiUrl), timeoutMs: 120_000 });

    beforeAll(async () => {
      server = await startServer();
      recorder = await startHeaderProxy(server.url);
      home = path.join(server.root, "home");
      project = path.join(server.root, "project");
      mkdirSync(home, { recursive: true });
      mkdirSync(project, { recursive: true });
      const header = `Authorization: Bearer ${server.token}`;
      for (const [name, url] of [
        ["corral", `${recorder.url}/mcp`],
        ["gemini", `${server.url}/mcp/gemini`],
        // A negative control: proves `mcp list` tells a refused connection apart.
        ["wrongtoken", `${server.url}/mcp`],
      ] as const) {
        const auth = name === "wrongtoken" ? "Authorization: Bearer not-the-token-0000" : header;
        const added = await claude(["mcp", "add", "--transport", "http", name, url, "--header", auth]);
        expect(added.code, describeRun(added)).toBe(0);
      }
    });

    afterAll(async () => {
      await recorder?.close();
      await server?.close();
    });

    it("claude mcp list shows Connected for /mcp and for the per-agent mount /mcp/gemini", async () => {
      const run = await claude(["mcp", "list"]);
      // `mcp list` exits 0 even when a server fails, so the status lines are what count.
      expect(run.code, describeRun(run)).toBe(0);
      const status = (name: string) => run.stdout.split("\n").find((line) => line.startsWith(`${name}: `)) ?? "";
      expect(status("corral"), describeRun(run)).toContain(`${recorder.url}/mcp (HTTP)`);
      expect(status("corral"), describeRun(run)).toMatch(/Connected/);
      expect(status("gemini"), describeRun(run)).toContain(`${server.url}/mcp/gemini (HTTP)`);
      expect(status("gemini"), describeRun(run)).toMatch(/Connected/);
      expect(status("wrongtoken"), describeRun(run)).toMatch(/Failed to connect/);
      expect(status("wrongtoken")).not.toMatch(/Connected/);
      // The era it spoke: 2026-07-28 from the first request on (no 400, no initialize), or 2025-11-25.
      const posts = recorder.exchanges.filter((e) => e.request.startsWith("POST"));
      const exchanges = JSON.stringify(posts, null, 1);
      expect(posts.length, exchanges).toBeGreaterThan(0);
      if (SPEAKS[build.version] === "2026-07-28") {
        expect(posts[0], exchanges).toMatchObject({ mcpMethod: "server/discover", protocolVersion: "2026-07-28", status: 200 });
        expect(
          posts.every((e) => e.protocolVersion === "2026-07-28" && e.status === 200),
          exchanges,
        ).toBe(true);
      } else {
        expect(SPEAKS[build.version], `say in SPEAKS which era Claude Code ${build.version} speaks`).toBe("2025-11-25");
        expect(
          posts.some((e) => e.protocolVersion === "2026-07-28"),
          exchanges,
        ).toBe(false);
      }
    });

    it("claude -p: the model calls gemini_run_async, corral_wait and gemini_done, and sees listo", async () => {
      const workdir = path.join(server.root, "jobs", "from-claude");
      // The scripted model reads the job id from the first tool result, as a real model would.
      let jobId = "";
      const script: Turn[] = [
        {
          kind: "tool",
          name: "mcp__gemini__gemini_run_async",
          args: { prompt: "write answer.txt forty-two", workdir },
          usage: { input: 900, output: 30 },
        },
        { kind: "tool", name: "mcp__corral__corral_wait", args: {}, usage: { input: 950, output: 20 } },
        { kind: "tool", name: "mcp__gemini__gemini_done", args: {}, usage: { input: 1000, output: 20 } },
        { kind: "text", text: "The gemini job is listo.", usage: { input: 1050, output: 8 } },
      ];
      const onRequest = (request: RecordedRequest) => {
        const first = toolResultsIn(request.body)[0];
        if (!first || jobId) return;
        jobId = first.text.trim();
        script[1] = { ...script[1]!, args: { job_ids: [jobId], timeout_s: 60 } } as Turn;
        script[2] = { ...script[2]!, args: { job_id: jobId } } as Turn;
      };
      const fake: FakeServer = await startFakeAnthropic(script, { onRequest });
      try {
        const run = await claude(
          [
            "-p",
            "Ask gemini to write answer.txt, wait for it, and tell me its status.",
            "--model",
            "claude-sonnet-4-5",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "mcp__corral,mcp__gemini",
          ],
          fake.url,
        );
        expect(run.code, describeRun(run)).toBe(0);
        const result = JSON.parse(run.stdout) as { is_error: boolean; result: string; num_turns: number };
        expect(result.is_error, describeRun(run)).toBe(false);
        expect(result.result).toBe("The gemini job is listo.");

        const defers = DEFERS_MCP_TOOLS[build.version];
        expect(defers, `say in DEFERS_MCP_TOOLS whether Claude Code ${build.version} defers MCP tools`).toBeTypeOf("boolean");
        expect(usedToolSearch(fake.requests)).toBe(defers);
        const tools = offeredTools(fake.requests);
        for (const name of [
          "mcp__gemini__gemini_run_async",
          "mcp__gemini__gemini_done",
          "mcp__corral__corral_wait",
          "mcp__corral__gemini_run_async",
        ]) {
          expect(tools, `tools offered to the model: ${[...tools].join(", ")}`).toContain(name);
        }

        const seen = lastToolResults(fake.requests);
        expect(
          seen.map((r) => r.isError),
          JSON.stringify(seen, null, 1),
        ).toEqual([false, false, false]);
        const [launched, waited, done] = seen;
        expect(launched?.text.trim()).toBe(jobId);
        expect(jobId).toMatch(/^\S+$/);
        expect(waited?.text).toMatch(/^all 1 ended/);
        expect(waited?.text.split("\n").find((line) => line.includes(jobId))).toMatch(/\blisto\b/);
        expect(done?.text.split("\n")[0]).toBe("listo");
        expect(done?.text).toContain(`job ${jobId}`);

        const job = await api<{ status: string; source?: string }>(server, "GET", `/api/jobs/${jobId}`);
        expect(job.body.status).toBe("succeeded");
        expect(readFileSync(path.join(workdir, "answer.txt"), "utf8")).toBe("forty-two");
      } finally {
        await fake.close();
      }
    });
  });
}
