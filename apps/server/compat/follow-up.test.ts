// Issue 15's flow as a user meets it: Claude Code (`claude -p`, a scripted model; each pinned version) asks
// gemini — the real Gemini CLI 0.61.0 behind Corral, talking to a fake Gemini API — for a file, then
// sends a follow-up in the same conversation with `session`. The worker's second request to its
// model must carry the first turn: the CLI resumed its own session rather than starting afresh.
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Job, JobThread } from "@corral/shared";
import { beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../test/fixtures/fake-llm/anthropic.js";
import { startFakeGemini } from "../test/fixtures/fake-llm/gemini.js";
import type { RecordedRequest, Turn } from "../test/fixtures/fake-llm/script.js";
import { api } from "../test/helpers.js";
import { lastToolResults, toolResultsIn } from "./lib/anthropic-transcript.js";
import { claudeEnv, clientBuilds, describeRun, runClient } from "./lib/clients.js";
import { conversation, find, mainRequests } from "./lib/conversation.js";
import { configureAgent, workerSuite } from "./lib/jobs.js";

const suite = workerSuite(["gemini"]);

const FIRST = "Write answer.txt containing forty-two.";
const SECOND = "Now say what you wrote, in one line.";

for (const build of clientBuilds("claude")) {
  describe(`a follow-up from Claude Code ${build.label} through Corral`, () => {
    let home: string;
    let project: string;

    beforeAll(async () => {
      const { server } = suite;
      home = path.join(server.root, `claude-home-${build.set}`);
      project = path.join(server.root, `project-${build.set}`);
      mkdirSync(home, { recursive: true });
      mkdirSync(project, { recursive: true });
      const added = await runClient(
        build.bin,
        ["mcp", "add", "--transport", "http", "gemini", `${server.url}/mcp/gemini`, "--header", `Authorization: Bearer ${server.token}`],
        { cwd: project, env: claudeEnv(home, null), timeoutMs: 60_000 },
      );
      expect(added.code, describeRun(added)).toBe(0);
    });

    it("claude -p asks gemini for a file, then follows up with session; gemini's second request carries the first turn", async () => {
      const { server } = suite;
      const workdir = path.join(server.root, "jobs", `follow-up-${build.set}`);
      // The worker's model: a write on the first turn, then answers (the follow-up's request already
      // holds the first turn's tool result, so it gets an answer).
      const gemini = suite.track(
        await startFakeGemini([
          {
            kind: "tool",
            name: "write_file",
            args: { file_path: path.join(workdir, "answer.txt"), content: "forty-two\n" },
            usage: { input: 900, output: 20 },
          },
          { kind: "text", text: "I wrote answer.txt with forty-two.", usage: { input: 1000, output: 12 } },
        ]),
      );
      await configureAgent(server, "gemini", { GOOGLE_GEMINI_BASE_URL: gemini.url, GEMINI_API_KEY: "fake", GEMINI_CLI_TRUST_WORKSPACE: "true" });

      // The orchestrator's model reads the job id from the first answer's "job <id>" line, as a real model would.
      let firstJob = "";
      const script: Turn[] = [
        { kind: "tool", name: "mcp__gemini__gemini_run", args: { prompt: FIRST, workdir }, usage: { input: 800, output: 30 } },
        { kind: "tool", name: "mcp__gemini__gemini_run", args: {}, usage: { input: 900, output: 30 } },
        { kind: "text", text: "gemini answered both turns.", usage: { input: 1000, output: 8 } },
      ];
      const onRequest = (request: RecordedRequest) => {
        const first = toolResultsIn(request.body)[0];
        if (!first || firstJob) return;
        firstJob = /\bjob (\w+)/.exec(first.text)?.[1] ?? "";
        script[1] = { ...script[1]!, args: { prompt: SECOND, session: firstJob } } as Turn;
      };
      const claude = suite.track(await startFakeAnthropic(script, { onRequest }));
      const run = await runClient(
        build.bin,
        [
          "-p",
          "Ask gemini for answer.txt, then ask it what it wrote.",
          "--model",
          "claude-sonnet-4-5",
          "--output-format",
          "json",
          "--permission-mode",
          "acceptEdits",
          "--allowedTools",
          "mcp__gemini",
        ],
        { cwd: project, env: claudeEnv(home, claude.url), timeoutMs: 240_000 },
      );
      expect(run.code, describeRun(run)).toBe(0);
      expect((JSON.parse(run.stdout) as { result: string }).result).toBe("gemini answered both turns.");

      const answers = lastToolResults(claude.requests);
      expect(
        answers.map((a) => a.text.split("\n")[0]),
        JSON.stringify(answers, null, 1),
      ).toEqual(["ok", "ok"]);
      expect(firstJob).toMatch(/^[a-z0-9]{6,32}$/);
      expect(readFileSync(path.join(workdir, "answer.txt"), "utf8")).toBe("forty-two\n");

      // The second job continued the first: same conversation, the CLI's own session resumed.
      const thread = (await api<JobThread>(server, "GET", `/api/jobs/${firstJob}/thread`)).body;
      expect(thread.jobs.map((j) => j.prompt)).toEqual([FIRST, SECOND]);
      const [first, second] = thread.jobs as [Job, Job];
      expect(second.followUpOf).toBe(first.id);
      expect(second.conversationId).toBe(first.id);
      expect(second.workdir).toBe(first.workdir);
      expect(first.workerSession).toMatch(/^[0-9a-f-]{36}$/);
      expect(second.workerSession).toBe(first.workerSession);
      expect(second.invocation?.args).toContain(`--resume=${first.workerSession}`);
      expect(answers[1]?.text).toContain(`follow-up of ${first.id}`);

      // What gemini's model saw on the follow-up: the first prompt, the first turn's model reply, then the new prompt.
      const followUpRequest = mainRequests(gemini).find((r) => find(conversation(r.body), "user", SECOND) >= 0);
      expect(followUpRequest, "gemini's follow-up request").toBeDefined();
      const said = conversation(followUpRequest?.body);
      const asked = find(said, "user", FIRST);
      const replied = said.findIndex((s, i) => i > asked && s.role === "assistant");
      expect(asked, JSON.stringify(said, null, 1)).toBeGreaterThanOrEqual(0);
      expect(replied).toBeGreaterThan(asked);
      expect(find(said, "user", SECOND, replied)).toBeGreaterThan(replied);
    });
  });
}
