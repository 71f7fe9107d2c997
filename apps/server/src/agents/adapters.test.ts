import { expect, test } from "vitest";
import type { AgentRow } from "../db/schema.js";
import { cliAdapters, newAgentRow } from "./catalog.js";
import type { JobSpec } from "./types.js";

/** A stored agent as the registry returns it: every default filled in. */
const agent = (over: Partial<AgentRow> = {}): AgentRow => ({ ...newAgentRow({ name: "x", kind: "gemini" }, 0), workdir: "/w", ...over }) as AgentRow;

const spec = (over: Partial<JobSpec> = {}): JobSpec => ({
  jobId: "abc123",
  prompt: "say 'hi'; rm -rf $HOME",
  workdir: "/w",
  model: "m1",
  agent: agent(),
  ...over,
});

test("gemini runs as pyCorral did (-m MODEL -y -p PROMPT), streaming JSON events", () => {
  expect(cliAdapters.gemini.invocation(spec(), "/bin/gemini")).toEqual({
    command: "/bin/gemini",
    args: ["-m", "m1", "-y", "-o", "stream-json", "-p", "say 'hi'; rm -rf $HOME"],
    env: {},
    cwd: "/w",
  });
});

test("opencode runs as pyCorral did and keeps its answer in output.md", () => {
  const inv = cliAdapters.opencode.invocation(spec(), "opencode");
  expect(inv.args).toEqual(["--log-level", "ERROR", "-m", "m1", "run", "--format", "json", "say 'hi'; rm -rf $HOME"]);
  expect(cliAdapters.opencode.finalTextFile).toBe("output.md");
});

test("kiro trusts its tools and never asks", () => {
  expect(cliAdapters.kiro.invocation(spec({ model: null }), "kiro-cli-chat").args).toEqual([
    "chat",
    "--no-interactive",
    "--trust-all-tools",
    "say 'hi'; rm -rf $HOME",
  ]);
});

test("claude may edit files in its workdir without asking", () => {
  expect(cliAdapters.claude.invocation(spec(), "claude").args).toEqual([
    "-p",
    "say 'hi'; rm -rf $HOME",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "acceptEdits",
    "--model",
    "m1",
  ]);
});

test("codex runs non-interactively, writing only in its workdir", () => {
  const args = cliAdapters.codex.invocation(spec(), "codex").args;
  expect(args.slice(0, 2)).toEqual(["exec", "--json"]);
  expect(args).toContain("workspace-write");
  expect(args.at(-1)).toBe("say 'hi'; rm -rf $HOME");
});

test("a command agent fills its argument template, each placeholder inside one argument", () => {
  const a = agent({ kind: "command", command: "dot", args: ["-Tpng", "-o", "{workdir}/out.png", "--label={prompt}", "{model}"] });
  expect(cliAdapters.command.invocation(spec({ agent: a }), "/usr/bin/dot").args).toEqual([
    "-Tpng",
    "-o",
    "/w/out.png",
    "--label=say 'hi'; rm -rf $HOME",
    "m1",
  ]);
});

test("a command agent without a template gets the prompt as its only argument", () => {
  const a = agent({ kind: "command", command: "script.sh" });
  expect(cliAdapters.command.invocation(spec({ agent: a }), "script.sh").args).toEqual(["say 'hi'; rm -rf $HOME"]);
});

test("the plain parser keeps stdout as the final text and ignores stderr", () => {
  const parser = cliAdapters.kiro.createParser(spec());
  parser.push("hello\n", "out");
  parser.push("warning\n", "err");
  parser.push("world\n", "out");
  expect(parser.finish()).toEqual({ finalText: "hello\nworld" });
});
