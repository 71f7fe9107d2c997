// The real Gemini CLI 0.61.0 and OpenCode 1.18.33 as Corral workers, each talking to a fake of
// its LLM API: the scripted model asks the CLI to write a file with the CLI's own write tool, the
// job succeeds, the file is there, and the usage Corral parsed from the CLI's real output matches
// what the fake API reported. In the sandbox, OpenCode's bash tool commits in its worktree, and the
// commit is taken onto the job's branch.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startFakeGemini } from "../test/fixtures/fake-llm/gemini.js";
import { startFakeOpenAI } from "../test/fixtures/fake-llm/openai.js";
import type { Script } from "../test/fixtures/fake-llm/script.js";
import { api } from "../test/helpers.js";
import { hasBwrap } from "../test/required-tool.js";
import { configureAgent, FAKE_OPENCODE_MODEL, opencodeConfig, pointOpencodeAt, runJob, workerSuite } from "./lib/jobs.js";

const suite = workerSuite(["gemini", "opencode"]);

/** Two model turns with distinct usage, as in the captured samples: a write, then the answer. */
function writeScript(tool: string, args: Record<string, unknown>): Script {
  return [
    { kind: "tool", name: tool, args, usage: { input: 1200, output: 40, cacheRead: 100, reasoning: 7 } },
    { kind: "text", text: "Done: wrote hello.txt", usage: { input: 1300, output: 12 } },
  ];
}

describe("real CLIs as Corral workers", () => {
  it("Gemini CLI 0.61.0 writes the file its model asked for; usage comes from its stream-json result", async () => {
    const workdir = path.join(suite.server.root, "jobs", "gemini");
    const fake = await startFakeGemini(writeScript("write_file", { file_path: path.join(workdir, "hello.txt"), content: "hello from gemini\n" }));
    suite.track(fake);
    await configureAgent(suite.server, "gemini", {
      GOOGLE_GEMINI_BASE_URL: fake.url,
      GEMINI_API_KEY: "fake",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    });

    const { job, output } = await runJob(suite.server, "gemini", { prompt: "Create hello.txt with a greeting.", workdir });
    expect(job.status, `${job.error ?? ""}\n${output}`).toBe("succeeded");
    expect(job.exitCode).toBe(0);
    expect(readFileSync(path.join(workdir, "hello.txt"), "utf8")).toBe("hello from gemini\n");
    expect(fake.requests.some((r) => r.path.includes("gemini-2.5-flash:streamGenerateContent"))).toBe(true);

    // The fake reported 1200 + 1300 prompt tokens (100 cached), 40 + 12 candidates and 7 thoughts;
    // thoughts bill as output.
    expect(job.usage).toMatchObject({ model: "gemini-2.5-flash", inputTokens: 2500, outputTokens: 59, cachedInputTokens: 100 });
    // Gemini CLI prints no cost, so Corral prices the tokens: Google's list price for
    // gemini-2.5-flash is $0.30 (input), $0.03 (cached input) and $2.50 (output) per million.
    expect(job.usage.costSource).toBe("estimated");
    expect(job.usage.costUsd).toBeCloseTo((2400 * 0.3 + 100 * 0.03 + 59 * 2.5) / 1e6, 10);
  });

  it("OpenCode 1.18.33 writes the file its model asked for; usage and cost come from its step_finish events", async () => {
    const workdir = path.join(suite.server.root, "jobs", "opencode");
    const fake = await startFakeOpenAI(writeScript("write", { filePath: path.join(workdir, "hello.txt"), content: "hello from opencode\n" }));
    suite.track(fake);
    const model = await pointOpencodeAt(suite.server, fake.url);

    const { job, output } = await runJob(suite.server, "opencode", { prompt: "Create hello.txt with a greeting.", workdir, model });
    expect(job.status, `${job.error ?? ""}\n${output}`).toBe("succeeded");
    expect(readFileSync(path.join(workdir, "hello.txt"), "utf8")).toBe("hello from opencode\n");
    // pyCorral's contract: the answer also lands in output.md.
    expect(readFileSync(path.join(workdir, "output.md"), "utf8").trim()).toBe("Done: wrote hello.txt");
    expect(fake.requests.some((r) => r.path === "/v1/chat/completions")).toBe(true);

    // Both steps summed, cache and reasoning included; the title request's usage is not reported.
    expect(job.usage).toMatchObject({ model: "fake/fake-model", inputTokens: 2500, outputTokens: 52, cachedInputTokens: 100 });
    // OpenCode prices each step from the config: 1100×$3 + 100×$0.30 + 40×$15, then 1300×$3 + 12×$15, per million.
    expect(job.usage.costSource).toBe("reported");
    expect(job.usage.costUsd).toBeCloseTo((1100 * 3 + 100 * 0.3 + 40 * 15 + 1300 * 3 + 12 * 15) / 1e6, 10);
  });

  it.skipIf(!hasBwrap())(
    "OpenCode 1.18.33 in the sandbox commits in its worktree with its bash tool; the commit lands on the job's branch",
    async () => {
      const repo = path.join(suite.server.root, "jobs", "boxed-repo");
      mkdirSync(repo, { recursive: true });
      const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8" }).trim();
      git("init", "-q", "-b", "main");
      writeFileSync(path.join(repo, "app.txt"), "start\n");
      git("add", ".");
      git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "start");
      const command =
        "echo hello > hello.txt && git add hello.txt && git -c user.name=oc -c user.email=oc@x commit -qm 'opencode commits' && git log --format=%s";
      const fake = suite.track(
        await startFakeOpenAI([
          { kind: "tool", name: "bash", args: { command, description: "Commit hello.txt" }, usage: { input: 1200, output: 40 } },
          { kind: "text", text: "Committed.", usage: { input: 1300, output: 12 } },
        ]),
      );
      // The sandbox's /tmp is its own; the suite's TMPDIR (under home) is read-only there.
      await configureAgent(suite.server, "opencode", { ...opencodeConfig(suite.server.root, fake.url), TMPDIR: "/tmp" });
      const model = FAKE_OPENCODE_MODEL;
      const boxed = await api(suite.server, "PATCH", "/api/agents/opencode", { sandbox: "bwrap" });
      expect(boxed.status, JSON.stringify(boxed.body)).toBe(200);
      try {
        const { job, output } = await runJob(suite.server, "opencode", { prompt: "Commit a greeting.", workdir: repo, worktree: true, model });
        expect(job.status, `${job.error ?? ""}\n${output}`).toBe("succeeded");
        // Its bash tool's output, in OpenCode's JSON events: the commit, on the worktree's history.
        expect(output).toContain(String.raw`"output":"opencode commits\nstart\n"`);
        expect(git("log", "--format=%an %s", `corral/${job.id}`).split("\n").slice(-2)).toEqual(["oc opencode commits", "u start"]);
        expect(git("show", `corral/${job.id}~0:hello.txt`)).toBe("hello");
        expect(git("log", "-1", "--format=%s", "main")).toBe("start");
      } finally {
        await api(suite.server, "PATCH", "/api/agents/opencode", { sandbox: "none" });
      }
    },
  );
});
