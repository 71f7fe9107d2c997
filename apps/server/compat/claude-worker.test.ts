// Claude Code as a Corral worker, each version the suite pins: an agent's `role` reaches it as
// `--append-system-prompt` and its `tools` as `--tools` (Claude's own names), so a claude agent
// declared with `tools: [read_file]` really runs with Read alone. The scripted model's requests
// show what the real CLI did with them.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../test/fixtures/fake-llm/anthropic.js";
import { api } from "../test/helpers.js";
import { offeredTools } from "./lib/anthropic-transcript.js";
import { clientBuilds } from "./lib/clients.js";
import { configureAgent, runJob, workerSuite } from "./lib/jobs.js";

const suite = workerSuite(["claude"]);

const ROLE = "You are the reviewer. Answer in one word.";

/** The text of a request's system prompt, however Claude Code sends it (a string or text blocks). */
function systemText(body: unknown): string {
  const system = (body as { system?: unknown } | null)?.system;
  if (typeof system === "string") return system;
  return Array.isArray(system) ? system.map((b) => (typeof b?.text === "string" ? b.text : "")).join("\n") : "";
}

describe("Claude Code as a worker", () => {
  for (const build of clientBuilds("claude")) {
    it(`${build.label}: the agent's role is appended to its system prompt and its tools are the only ones it has`, async () => {
      const { server } = suite;
      const fake = suite.track(await startFakeAnthropic([{ kind: "text", text: "Approved.", usage: { input: 900, output: 3 } }]));
      const workerEnv = {
        ANTHROPIC_API_KEY: "fake",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
      };
      await configureAgent(server, "claude", { ...workerEnv, ANTHROPIC_BASE_URL: fake.url });
      const shaped = await api(server, "PATCH", "/api/agents/claude", { command: build.bin, role: ROLE, tools: ["read_file", "grep"] });
      expect(shaped.status, JSON.stringify(shaped.body)).toBe(200);
      const { job, output } = await runJob(server, "claude", {
        prompt: "Review it.",
        workdir: path.join(server.root, "jobs", `claude-${build.set}`),
      });
      expect(job.status, `${job.error ?? ""}\n${output}`).toBe("succeeded");
      expect(job.invocation?.args).toContain(`--append-system-prompt=${ROLE}`);
      expect(job.invocation?.args).toContain("--tools=Read,Grep");
      const main = fake.requests.filter((r) => systemText(r.body).includes(ROLE));
      expect(main.length, "a request whose system prompt holds the role").toBeGreaterThan(0);
      // Read and Grep, and none of Claude Code's other built-in tools (2.1.332 also names a placeholder of its tool search).
      const offered = offeredTools(main);
      expect(offered).toContain("Read");
      expect(offered).toContain("Grep");
      for (const other of ["Bash", "Write", "Edit", "Glob", "WebFetch", "WebSearch", "Task", "NotebookEdit"]) expect(offered).not.toContain(other);

      // tools: [] is none at all (--tools=), as an API agent's empty list is; unset would be Claude's default set.
      const second = suite.track(await startFakeAnthropic([{ kind: "text", text: "Nothing to use.", usage: { input: 900, output: 3 } }]));
      await configureAgent(server, "claude", { ...workerEnv, ANTHROPIC_BASE_URL: second.url });
      expect((await api(server, "PATCH", "/api/agents/claude", { tools: [] })).status).toBe(200);
      const bare = await runJob(server, "claude", {
        prompt: "Review it again.",
        workdir: path.join(server.root, "jobs", `claude-bare-${build.set}`),
      });
      expect(bare.job.status, `${bare.job.error ?? ""}\n${bare.output}`).toBe("succeeded");
      expect(bare.job.invocation?.args).toContain("--tools=");
      const none = offeredTools(second.requests.filter((r) => systemText(r.body).includes(ROLE)));
      expect(second.requests.some((r) => systemText(r.body).includes(ROLE))).toBe(true);
      for (const builtin of ["Read", "Grep", "Bash", "Write", "Edit", "Glob", "WebFetch"]) expect(none).not.toContain(builtin);
    });
  }
});
