import { stripAnsi } from "@corral/shared";
import { describe, expect, it } from "vitest";
import claudeError from "../../../server/test/fixtures/samples/claude-2.1.197-json-error400.json?raw";
import claudeStream from "../../../server/test/fixtures/samples/claude-2.1.197-stream-json.ndjson?raw";
import codexError from "../../../server/test/fixtures/samples/codex-0.171.0-exec-json-error400.ndjson?raw";
import codexStream from "../../../server/test/fixtures/samples/codex-0.171.0-exec-json.ndjson?raw";
import geminiStream from "../../../server/test/fixtures/samples/gemini-0.61.0-stream-json.ndjson?raw";
import opencodeError from "../../../server/test/fixtures/samples/opencode-1.18.33-format-json-error400.ndjson?raw";
import opencodeStream from "../../../server/test/fixtures/samples/opencode-1.18.33-format-json.ndjson?raw";
import { eventFormatFor, MAX_SHORT, MAX_TEXT, readableLine, readableView, type EventFormat } from "./event-lines.js";
import { appendOutput, emptyOutput, type OutputLine } from "./output-buffer.js";

const outLines = (text: string): OutputLine[] => appendOutput(emptyOutput(), [{ stream: "out", text }], 0, text.length, true).lines;
/** What a person sees: the readable lines without colour codes. */
const shown = (format: EventFormat, text: string) => readableView(format, outLines(text)).lines.map((l) => stripAnsi(l.text));
const work = (cli: string) => `/tmp/corral-capture.AfEYEF/${cli}/work`;

describe("readable event lines from the captured samples", () => {
  it("gemini stream-json: session, prompt, tool call and result, the answer's deltas joined, the summary", () => {
    expect(shown("gemini", geminiStream)).toEqual([
      "· session started · gemini-2.5-flash",
      "› Create hello.txt containing a greeting, then say what you did.",
      `→ write_file ${work("gemini-0.61.0-stream-json")}/hello.txt`,
      "← ok",
      "Done: wrote hello.txt",
      "✓ done · 2,500 in / 52 out · 0.2 s · 1 tool calls",
    ]);
    // Line numbers point at the raw lines each readable line came from.
    expect(readableView("gemini", outLines(geminiStream)).sources).toEqual([0, 1, 2, 3, 4, 6]);
  });

  it("claude stream-json: tool_use with its file, tool_result, text, result with tokens, cost and turns", () => {
    expect(shown("claude", claudeStream)).toEqual([
      "· session started · claude-sonnet-4-5 · 24 tools",
      `→ Write ${work("claude-2.1.197-stream-json")}/hello.txt`,
      `← ok ${`File created successfully at: ${work("claude-2.1.197-stream-json")}/hello.txt (file state is current in your context — no need to Read it back)`.slice(0, MAX_SHORT - 1)}…`,
      "Done: wrote hello.txt",
      "✓ done · 2,650 in / 52 out · $0.0085 · 0.2 s · 2 turns",
    ]);
  });

  it("claude's error result is an error line with the API message", () => {
    const [line] = shown("claude", claudeError);
    expect(line).toBe("✗ API Error: 400 fake: scripted failure 400 · 0 in / 0 out · $0 · 0.2 s · 1 turn");
  });

  it("opencode json: step markers hidden, the tool call with its result, text, per-step usage", () => {
    expect(shown("opencode", opencodeStream)).toEqual([
      `→ write ${work("opencode-1.18.33-format-json")}/hello.txt\n← ok Wrote file successfully.`,
      "· step done · 1,200 in / 40 out · $0.0039",
      "Done: wrote hello.txt",
      "· step done · 1,300 in / 12 out · $0.0041",
    ]);
    expect(shown("opencode", opencodeError)).toEqual(["✗ fake: scripted failure 400"]);
  });

  it("codex exec --json: file change started and done, the answer, turn usage; API errors unwrapped", () => {
    const file = `${work("codex-0.171.0-exec-json")}/hello.txt`;
    expect(shown("codex", codexStream)).toEqual([
      "· session started",
      `→ patch add ${file}`,
      `← ok add ${file}`,
      "Done: wrote hello.txt",
      "✓ turn done · 2,500 in / 52 out",
    ]);
    expect(shown("codex", codexError)).toEqual(["· session started", "✗ fake: scripted failure 400", "✗ fake: scripted failure 400"]);
  });
});

describe("readableLine", () => {
  it("leaves lines that are not events untouched, and stderr is never read as events", () => {
    expect(readableLine("gemini", "Warning: 256-color support not detected")).toEqual({ text: "Warning: 256-color support not detected" });
    expect(readableLine("claude", "{not json}")).toEqual({ text: "{not json}" });
    expect(readableLine("codex", '{"no":"type"}')).toEqual({ text: '{"no":"type"}' });
    const err: OutputLine = { stream: "err", text: '{"type":"error","message":"x"}' };
    expect(readableView("codex", [err]).lines).toEqual([err]);
  });

  it("cuts long texts and arguments with an ellipsis", () => {
    const long = "x".repeat(10_000);
    const text = readableLine("opencode", JSON.stringify({ type: "text", part: { text: long } }))?.text ?? "";
    expect(text.length).toBe(MAX_TEXT);
    expect(text.endsWith("…")).toBe(true);
    const tool = stripAnsi(readableLine("claude", JSON.stringify({ type: "assistant", message: { content: [{ type: "tool_use", name: "Bash", input: { command: long } }] } }))?.text ?? "");
    expect(tool.length).toBeLessThanOrEqual(MAX_SHORT + 10);
    expect(tool.startsWith("→ Bash xxx")).toBe(true);
    // Thousands of streamed pieces still make one bounded line.
    const delta = JSON.stringify({ type: "message", role: "assistant", content: "y".repeat(100), delta: true });
    const view = readableView("gemini", outLines(`${delta}\n`.repeat(500)));
    expect(view.lines).toHaveLength(1);
    expect(view.lines[0]?.text.length).toBe(MAX_TEXT);
  });

  it("shows failed tool results and shell commands", () => {
    const failed = JSON.stringify({ type: "tool_result", tool_id: "t", status: "error", error: { type: "x", message: "file not found" } });
    expect(stripAnsi(readableLine("gemini", failed)?.text ?? "")).toBe("← error: file not found");
    const denied = JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", is_error: true, content: "permission denied" }] } });
    expect(stripAnsi(readableLine("claude", denied)?.text ?? "")).toBe("← error: permission denied");
    const started = JSON.stringify({ type: "item.started", item: { type: "command_execution", command: "bash -lc ls", status: "in_progress" } });
    const done = JSON.stringify({ type: "item.completed", item: { type: "command_execution", command: "bash -lc ls", aggregated_output: "a\nhello.txt\n", exit_code: 0, status: "completed" } });
    expect(stripAnsi(readableLine("codex", started)?.text ?? "")).toBe("→ shell bash -lc ls");
    expect(stripAnsi(readableLine("codex", done)?.text ?? "")).toBe("← ok exit 0 · hello.txt");
  });

  it("knows which agent kinds print events", () => {
    expect(eventFormatFor("claude")).toBe("claude");
    expect(eventFormatFor("kiro")).toBeNull();
    expect(eventFormatFor("command")).toBeNull();
    expect(eventFormatFor(undefined)).toBeNull();
  });
});
