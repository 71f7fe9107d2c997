// Antigravity CLI could not be run here (closed source, not on npm): these streams are built from
// the shapes its documentation and its users' published runs show (agy.ts names the sources), the
// result's usage taken from a published 1.1.8 envelope (google-antigravity/antigravity-cli#408).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { McpJobInputSchema, readableText, type ReadableEvent } from "@corral/shared";
import { afterAll, describe, expect, test } from "vitest";
import type { AgentRow } from "../../db/schema.js";
import { OutputLog } from "../../jobs/output-log.js";
import { readReadable } from "../../jobs/readable-output.js";
import { newAgentRow } from "../catalog.js";
import { agentKindModule, cliAdapterFor } from "../kind-lookup.js";
import { readableLine } from "../readable.js";
import type { JobSpec, OutputParser, UsageReport, WorkerResult } from "../types.js";
import { agyParser } from "./agy.js";

const conversation = "3f0c2a8e-5b1d-4c7e-9a2f-6d8b1e4c7a90";
const agent = newAgentRow({ name: "agy", kind: "agy", workdir: "/w" }, 0) as AgentRow;
const spec = (over: Partial<JobSpec> = {}): JobSpec => ({ jobId: "abc123", prompt: "Create hello.txt", workdir: "/w", model: null, agent, ...over });

const line = (ev: unknown) => `${JSON.stringify(ev)}\n`;
const step = (step_index: number, state: "ACTIVE" | "DONE", step_type: string, more: Record<string, unknown> = {}) => ({
  event: "step_update",
  step_update: { conversation_id: conversation, step_index, state, step_type, ...more },
});
const init = {
  event: "init",
  conversation_id: conversation,
  init: {
    cwd: "/w",
    model: "gemini-3.8-flash-high",
    agent: "default",
    permission_mode: "always-proceed",
    tools: ["view_file", "write_to_file", "run_command"],
  },
};
const write = { name: "write_to_file", parameters: { TargetFile: "/w/hello.txt", CodeContent: "hi" } };
const resultLine = (over: Record<string, unknown> = {}) => ({
  event: "result",
  result: {
    conversation_id: conversation,
    status: "SUCCESS",
    response: "Done: wrote hello.txt",
    duration_seconds: 4.2,
    num_turns: 1,
    usage: { input_tokens: 32840, output_tokens: 107, thinking_tokens: 89, cache_read_tokens: 16000, total_tokens: 32947 },
    ...over,
  },
});
/** A turn that writes a file and answers: the prompt, a first answer, the tool call, the last answer. */
const turn = [
  init,
  step(0, "DONE", "user_input", { text_delta: "Create hello.txt" }),
  step(1, "ACTIVE", "agent_response", { text_delta: "I will write " }),
  step(1, "ACTIVE", "agent_response", { text_delta: "the file." }),
  step(1, "DONE", "agent_response", {
    text_delta: "",
    usage: { input_tokens: 16340, output_tokens: 95, thinking_tokens: 89, cache_read_tokens: 0, total_tokens: 16435 },
  }),
  step(2, "ACTIVE", "tool", { tool_name: "write_to_file", tool_info: write }),
  step(2, "DONE", "tool", { tool_name: "write_to_file", tool_info: { ...write, output: "Created file /w/hello.txt" }, duration_seconds: 0.02 }),
  step(3, "ACTIVE", "agent_response", { text_delta: "Done: wrote " }),
  step(3, "DONE", "agent_response", {
    text_delta: "hello.txt",
    usage: { input_tokens: 16500, output_tokens: 12, thinking_tokens: 0, cache_read_tokens: 16000, total_tokens: 16512 },
  }),
];

/** Feeds stdout line by line (and stderr), as the job engine does; the usage each line streamed, and the result. */
function run(events: unknown[], parser: OutputParser = agyParser(spec()), stderr = ""): { streamed: UsageReport[]; result: WorkerResult } {
  const streamed: UsageReport[] = [];
  if (stderr) parser.push(stderr, "err");
  for (const ev of events) {
    const usage = parser.push(typeof ev === "string" ? ev : line(ev), "out");
    if (usage) streamed.push(usage);
  }
  return { streamed, result: parser.finish() };
}

describe("agy --output-format=stream-json", () => {
  test("answer, usage and model from the result; the conversation to resume from init", () => {
    const { streamed, result } = run([...turn, resultLine()]);
    // Output already holds the thinking (95 output for a one-word answer with 89 thinking, in the
    // published capture), so it is not added again; cached prompt tokens are part of the input.
    expect(result).toEqual({
      finalText: "Done: wrote hello.txt",
      usage: { model: "gemini-3.8-flash-high", inputTokens: 32840, outputTokens: 107, cachedInputTokens: 16000 },
      sessionId: conversation,
    });
    // While it runs: the model first, then each model call's tokens as their steps end.
    expect(streamed).toEqual([
      { model: "gemini-3.8-flash-high" },
      { model: "gemini-3.8-flash-high", inputTokens: 16340, outputTokens: 95, cachedInputTokens: 0 },
      { model: "gemini-3.8-flash-high", inputTokens: 32840, outputTokens: 107, cachedInputTokens: 16000 },
      { model: "gemini-3.8-flash-high", inputTokens: 32840, outputTokens: 107, cachedInputTokens: 16000 },
    ]);
  });

  test("a step's later counts replace its earlier ones; a new step adds to them", () => {
    const usage = (input: number, output: number) => ({ input_tokens: input, output_tokens: output });
    const { streamed } = run([
      step(1, "ACTIVE", "agent_response", { usage: usage(100, 10) }),
      step(1, "DONE", "agent_response", { usage: usage(100, 50) }),
      step(2, "DONE", "agent_response", { usage: usage(300, 5) }),
    ]);
    expect(streamed.map((u) => [u.inputTokens, u.outputTokens])).toEqual([
      [100, 10],
      [100, 50],
      [400, 55],
    ]);
  });

  test("a result without a response (after tool calls) leaves the answer streamed after the last tool step", () => {
    const { result: read } = run([...turn, resultLine({ response: "" })]);
    expect(read.finalText).toBe("Done: wrote hello.txt");
    expect(read.failure).toBeUndefined();
  });

  test("the model Corral passed names the usage when init names none", () => {
    const { result: read } = run([{ ...init, init: {} }, resultLine()], agyParser(spec({ model: "gemini-3.1-pro" })));
    expect(read.usage?.model).toBe("gemini-3.1-pro");
  });

  test.each([
    ["ERROR", "RESOURCE_EXHAUSTED: quota exceeded for gemini-3.1-pro", "RESOURCE_EXHAUSTED: quota exceeded for gemini-3.1-pro"],
    ["CANCELLED", undefined, "Antigravity CLI ended its turn with status CANCELLED"],
    ["TIMEOUT", { message: "turn timed out" }, "turn timed out"],
    ["ERROR", '{"error":{"code":429,"message":"Resource has been exhausted"}}', "Resource has been exhausted"],
  ])("status %s fails the run whatever the exit code, saying why", (status, error, why) => {
    const { result: read } = run([...turn, resultLine({ status, error, response: "partial" })]);
    expect(read.error).toBe(why);
    // `failure` fails a job that exited 0; a job that exited otherwise fails with `error`.
    expect(read.failure).toBe(why);
    expect(read.sessionId).toBe(conversation);
  });

  test("a run that ended without its result failed, even with an answer streamed", () => {
    const { result: read } = run(turn);
    expect(read.finalText).toBe("Done: wrote hello.txt");
    expect(read.failure).toMatch(
      /^Antigravity CLI ended without the result of its turn.*agy 1\.1\.8 or later prints one \(update it with agy update\)/,
    );
    expect(read.error).toBeUndefined();
  });

  test("an agy too old for the JSON output (plain text, no events) is kept as text and fails the run", () => {
    const { result: read } = run(["PONG\n"]);
    expect(read.finalText).toBe("PONG");
    expect(read.failure).toMatch(/without the result of its turn/);
  });

  test("a huge response and a huge stream of deltas are bounded", () => {
    const huge = "x".repeat(2 * 256 * 1024);
    expect(run([resultLine({ response: huge })]).result.finalText?.endsWith("[…truncated]")).toBe(true);
    const deltas = Array.from({ length: 10 }, () => step(1, "ACTIVE", "agent_response", { text_delta: "y".repeat(64 * 1024) }));
    const text = run(deltas).result.finalText ?? "";
    expect(text.length).toBeLessThan(300 * 1024);
    expect(text.endsWith("[…truncated]")).toBe(true);
  });

  // Whatever a worker prints is untrusted: an id of the wrong shape never reaches a follow-up's
  // command line, and fields of the wrong type are read as absent.
  test.each(["--help", "latest", "../../x", `${conversation} --version`, 42])("a conversation id %j is not kept", (bad) => {
    expect(run([{ ...init, conversation_id: bad }, resultLine({ conversation_id: bad })]).result.sessionId).toBeUndefined();
  });

  test("the run's own conversation is the first one named: a subagent's later steps do not replace it", () => {
    const other = "5d0a488a-b058-4fce-81c2-5a11999e5696";
    const { result: read } = run([
      init,
      { event: "step_update", step_update: { conversation_id: other, step_type: "agent_response" } },
      resultLine(),
    ]);
    expect(read.sessionId).toBe(conversation);
  });

  test("fields of the wrong type are read as absent", () => {
    const { result: read } = run([
      { event: "init", conversation_id: conversation, init: "gemini" },
      { event: "step_update", step_update: [1, 2] },
      step(1, "ACTIVE", "agent_response", { text_delta: { not: "text" }, usage: { input_tokens: "9e9", output_tokens: Number.NaN } }),
      { event: "result", result: { status: ["SUCCESS"], response: 7, usage: { input_tokens: "12" } } },
    ]);
    expect(read.finalText).toBeUndefined();
    expect(read.failure).toBe("Antigravity CLI ended its turn with status no status");
    expect(read.usage).toEqual({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 });
  });
});

const dir = mkdtempSync(path.join(tmpdir(), "corral-agy-readable-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the panel's Readable view shows of a job that printed `events`: consecutive answer pieces joined. */
function shown(events: unknown[]): string[] {
  const log = new OutputLog(path.join(dir, `${Math.random().toString(36).slice(2)}.log`));
  log.append("out", Buffer.from(events.map(line).join("")));
  log.close();
  const read: ReadableEvent[] = readReadable(log.file, agentKindModule("agy"), 0, 1 << 20, true).events;
  const lines: string[] = [];
  let joining = false;
  for (const ev of read) {
    const delta = ev.type === "text" && ev.delta === true;
    if (delta && joining) lines[lines.length - 1] += ev.text;
    else lines.push(readableText(ev));
    joining = delta;
  }
  return lines;
}

describe("agy in the Readable view", () => {
  test("session, prompt, the answer's pieces joined, the tool call and its result, the job's usage", () => {
    expect(shown([...turn, resultLine()])).toEqual([
      "· session started · gemini-3.8-flash-high · 3 tools",
      "› Create hello.txt",
      "I will write the file.",
      "→ write_to_file /w/hello.txt",
      "← ok Created file /w/hello.txt",
      "Done: wrote hello.txt",
      "✓ done · 32,840 in / 107 out · 4.2 s · 1 turn · 89 thinking tokens in the output",
    ]);
  });

  test("a failed tool, a system message, denied tool calls and an error result", () => {
    expect(
      shown([
        step(1, "ACTIVE", "tool", { tool_name: "run_command", tool_info: { name: "run_command", parameters: { CommandLine: "rm -rf build" } } }),
        step(1, "DONE", "tool", { tool_name: "run_command", error: "permission check failed" }),
        step(2, "DONE", "system_message", { text_delta: "Session ready." }),
        resultLine({ status: "ERROR", error: "quota exhausted", usage: undefined, num_turns: undefined, denied_actions: [{ tool: "run_command" }] }),
      ]),
    ).toEqual([
      "→ run_command rm -rf build",
      "← error: permission check failed",
      "· Session ready.",
      "✗ quota exhausted · 4.2 s · 1 tool call denied",
    ]);
  });

  test("its events are named by `event`: a line without it, or named by `type` as other CLIs do, reads as printed", () => {
    const module = agentKindModule("agy");
    const typed = JSON.stringify({ type: "message", role: "assistant", content: "hi" });
    expect(readableLine(module, typed)).toEqual([{ type: "output", stream: "out", text: typed }]);
    expect(readableLine(module, "Updating agy…")).toEqual([{ type: "output", stream: "out", text: "Updating agy…" }]);
    expect(readableLine(module, JSON.stringify({ event: "future_thing" }))).toEqual([]);
  });

  test("its usage lines add up to the tokens the job's Usage card shows", () => {
    const events = [...turn, resultLine()];
    const card = agyParser(spec());
    for (const ev of events) card.push(line(ev), "out");
    const usage = card.finish().usage;
    const summed = { input: 0, output: 0 };
    for (const shownLine of shown(events)) {
      const m = /([\d,]+) in \/ ([\d,]+) out/.exec(shownLine);
      if (!m) continue;
      summed.input += Number(m[1]?.replaceAll(",", ""));
      summed.output += Number(m[2]?.replaceAll(",", ""));
    }
    expect(summed).toEqual({ input: usage?.inputTokens, output: usage?.outputTokens });
  });
});

describe("agy's invocation", () => {
  const adapter = cliAdapterFor("agy");
  if (!adapter) throw new Error("no agy kind");
  const uuid = "4787530e-89f1-4301-bb1a-75b8d5e78f04";

  test("print mode with its stream, tools allowed, the workdir as its workspace, every value glued and the prompt last", () => {
    expect(adapter.invocation(spec({ model: "gemini-3.1-pro", prompt: "say 'hi'; rm -rf $HOME" }), "/home/me/.local/bin/agy")).toEqual({
      command: "/home/me/.local/bin/agy",
      args: [
        "--output-format=stream-json",
        "--dangerously-skip-permissions",
        "--print-timeout=169h",
        "--add-dir=/w",
        "--model=gemini-3.1-pro",
        "--print=say 'hi'; rm -rf $HOME",
      ],
      env: {},
      cwd: "/w",
    });
  });

  test("a follow-up resumes the earlier job's conversation with --conversation=<id>", () => {
    const args = adapter.invocation(spec({ followUp: { jobId: "first1", workerSession: uuid } }), "agy").args;
    expect(args.slice(-2)).toEqual([`--conversation=${uuid}`, "--print=Create hello.txt"]);
  });

  test("agy's own print timeout outlasts the longest job, so Corral's timeout ends a job, never agy's partial answer", () => {
    const longest = McpJobInputSchema.shape.timeout_s.unwrap().maxValue ?? Number.POSITIVE_INFINITY;
    const flag = adapter.invocation(spec(), "agy").args.find((a) => a.startsWith("--print-timeout="));
    const hours = Number(/^--print-timeout=(\d+)h$/.exec(flag ?? "")?.[1]);
    expect(hours * 3600).toBeGreaterThan(longest);
  });

  test("its sandbox may write its own state, not Gemini CLI's; its workers get its own switches", () => {
    expect(adapter.stateDirs).toEqual([".gemini/antigravity-cli", ".gemini/config"]);
    expect(adapter.ownEnv(null)).toEqual(["AGY_CLI_*"]);
  });
});
