// Worktree jobs driven by Claude Code, as the worktrees issue's acceptance asks: in `claude -p`, a
// scripted model launches three gemini jobs with `worktree: true` on one repository, each writing
// the same file differently, waits for all three (three branches with their diff stats), merges
// one, meets the second's conflict, and discards the third; the repository ends as expected.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../test/fixtures/fake-llm/anthropic.js";
import type { RecordedRequest, Turn } from "../test/fixtures/fake-llm/script.js";
import { startServer, type TestServer } from "../test/helpers.js";
import { lastToolResults, toolResultsIn } from "./lib/anthropic-transcript.js";
import { claudeEnv, clientBuilds, describeRun, runClient } from "./lib/clients.js";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" },
  }).trim();

for (const build of clientBuilds("claude")) {
  describe(`Claude Code ${build.label}: worktree jobs`, () => {
    let server: TestServer;
    let home: string;
    let repo: string;

    beforeAll(async () => {
      server = await startServer();
      home = path.join(server.root, "home");
      repo = path.join(server.root, "repo");
      mkdirSync(home, { recursive: true });
      mkdirSync(repo, { recursive: true });
      git(repo, "init", "-q", "-b", "main");
      writeFileSync(path.join(repo, "app.txt"), "start\n");
      git(repo, "add", ".");
      git(repo, "commit", "-q", "-m", "start");
      const added = await runClient(
        build.bin,
        ["mcp", "add", "--transport", "http", "corral", `${server.url}/mcp?toolsets=worktrees`, "--header", `Authorization: Bearer ${server.token}`],
        { cwd: repo, env: claudeEnv(home, null), timeoutMs: 60_000 },
      );
      expect(added.code, describeRun(added)).toBe(0);
    });

    afterAll(async () => {
      await server?.close();
    });

    it("three at once on one repository: corral_wait names three branches, one merges, one conflicts, one is discarded", async () => {
      const launch = (text: string): Turn => ({
        kind: "tool",
        name: "mcp__corral__gemini_run_async",
        args: { prompt: `write app.txt ${text}`, workdir: repo, worktree: true },
        usage: { input: 900, output: 30 },
      });
      const script: Turn[] = [
        launch("by-a"),
        launch("by-b"),
        launch("by-c"),
        { kind: "tool", name: "mcp__corral__corral_wait", args: {}, usage: { input: 950, output: 20 } },
        { kind: "tool", name: "mcp__corral__corral_merge", args: {}, usage: { input: 1000, output: 20 } },
        { kind: "tool", name: "mcp__corral__corral_merge", args: {}, usage: { input: 1050, output: 20 } },
        { kind: "tool", name: "mcp__corral__corral_discard", args: {}, usage: { input: 1100, output: 20 } },
        { kind: "text", text: "Merged a, b conflicts, c discarded.", usage: { input: 1150, output: 8 } },
      ];
      // The scripted model reads the job ids from the launches' results, as a real model would.
      const ids: string[] = [];
      const onRequest = (request: RecordedRequest) => {
        const results = toolResultsIn(request.body);
        for (const result of results.slice(ids.length, 3)) ids.push(result.text.trim());
        if (ids.length < 3) return;
        const [a, b, c] = ids;
        script[3] = { ...script[3]!, args: { job_ids: ids, timeout_s: 60 } } as Turn;
        script[4] = { ...script[4]!, args: { job_id: a } } as Turn;
        script[5] = { ...script[5]!, args: { job_id: b } } as Turn;
        script[6] = { ...script[6]!, args: { job_id: c } } as Turn;
      };
      const fake = await startFakeAnthropic(script, { onRequest });
      try {
        const run = await runClient(
          build.bin,
          [
            "-p",
            "Have three gemini jobs edit app.txt in worktrees, then merge, merge and discard them.",
            "--model",
            "claude-sonnet-4-5",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "mcp__corral",
          ],
          { cwd: repo, env: claudeEnv(home, fake.url), timeoutMs: 180_000 },
        );
        expect(run.code, describeRun(run)).toBe(0);
        const seen = lastToolResults(fake.requests);
        const [, , , waited, merged, conflicted, discarded] = seen.map((r) => r.text);
        const [a, b, c] = ids as [string, string, string];
        expect(
          ids.every((id) => /^[a-z0-9]{12}$/.test(id)),
          JSON.stringify(seen, null, 1),
        ).toBe(true);
        expect(waited).toMatch(/^all 3 ended/);
        for (const id of ids) expect(waited).toContain(`branch corral/${id} (from main)`);
        expect(waited?.match(/1 commit, 1 file changed/g)).toHaveLength(3);
        expect(merged).toMatch(new RegExp(`^merged corral/${a} into main \\(fast-forward`));
        expect(seen[5]?.isError).toBe(true);
        expect(conflicted).toMatch(new RegExp(`corral/${b} does not merge cleanly into main: app\\.txt; nothing was merged`));
        expect(discarded).toMatch(new RegExp(`^discarded corral/${c} and its worktree, with 1 commit its base lacks`));

        expect(git(repo, "log", "--format=%s", "main").split("\n")).toEqual([`corral: what job ${a} (gemini) left uncommitted`, "start"]);
        expect(readFileSync(path.join(repo, "app.txt"), "utf8")).toBe("by-a");
        expect(git(repo, "status", "--porcelain")).toBe("");
        expect(git(repo, "branch", "--list", "--format=%(refname:short)", "corral/*")).toBe(`corral/${b}`);
      } finally {
        await fake.close();
      }
    });
  });
}
