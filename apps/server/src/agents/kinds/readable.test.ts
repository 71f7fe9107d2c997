import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { READABLE_MAX_SHORT, readableText, type ReadableEvent } from "@corral/shared";
import { afterAll, describe, expect, test } from "vitest";
import { atLastLineEnd, OutputLog } from "../../jobs/output-log.js";
import { lastReadableLine, MAX_READABLE_EVENTS, readReadable } from "../../jobs/readable-output.js";
import { readableLine } from "../readable.js";
import { agentKindModule, cliAdapterFor } from "../kind-lookup.js";
import type { JobSpec } from "../types.js";

const samples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../test/fixtures/samples");
const sample = (name: string) => readFileSync(path.join(samples, name), "utf8");
const work = (cli: string) => `/tmp/corral-capture.AfEYEF/${cli}/work`;
const dir = mkdtempSync(path.join(tmpdir(), "corral-readable-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let logs = 0;
/** A job's output log holding `chunks` as the worker printed them. */
function logOf(chunks: Array<[stream: "out" | "err" | "sys", text: string]>): string {
  const log = new OutputLog(path.join(dir, `${++logs}.log`));
  for (const [stream, text] of chunks) log.append(stream, Buffer.from(text));
  log.close();
  return log.file;
}

/** Every readable event of an ended job, read a page of `limit` bytes at a time. */
function allEvents(kind: string, file: string, limit = 1 << 20): ReadableEvent[] {
  const events: ReadableEvent[] = [];
  for (let cursor = 0; ; ) {
    const page = readReadable(file, agentKindModule(kind), cursor, limit, true);
    for (const event of page.events) events.push(event);
    if (page.complete) return events;
    cursor = page.cursor;
  }
}

/** What the panel shows: consecutive answer pieces are one line (the panel joins them). */
function shown(kind: string, text: string): string[] {
  const lines: string[] = [];
  let joining = false;
  for (const ev of allEvents(kind, logOf([["out", text]]))) {
    const delta = ev.type === "text" && ev.delta === true;
    if (delta && joining) lines[lines.length - 1] += ev.text;
    else lines.push(readableText(ev));
    joining = delta;
  }
  return lines.map((l) => l.trimEnd());
}

const line = (kind: string, ev: unknown) => readableLine(agentKindModule(kind), JSON.stringify(ev)).map(readableText);

describe("readable events from the captured samples", () => {
  test("gemini stream-json: session, prompt, tool call and result, the answer's deltas joined, the summary", () => {
    expect(shown("gemini", sample("gemini-0.61.0-stream-json.ndjson"))).toEqual([
      "· session started · gemini-2.5-flash",
      "› Create hello.txt containing a greeting, then say what you did.",
      `→ write_file ${work("gemini-0.61.0-stream-json")}/hello.txt`,
      "← ok",
      "Done: wrote hello.txt",
      "✓ done · 2,500 in / 59 out · 0.2 s · 1 tool call",
    ]);
  });

  test("claude stream-json: tool_use with its file, tool_result, text, result with tokens, cost and turns", () => {
    expect(shown("claude", sample("claude-2.1.197-stream-json.ndjson"))).toEqual([
      "· session started · claude-sonnet-4-5 · 24 tools",
      `→ Write ${work("claude-2.1.197-stream-json")}/hello.txt`,
      `← ok ${`File created successfully at: ${work("claude-2.1.197-stream-json")}/hello.txt (file state is current in your context — no need to Read it back)`.slice(0, READABLE_MAX_SHORT - 1)}…`,
      "Done: wrote hello.txt",
      "✓ done · 2,650 in / 52 out · $0.0085 · 0.2 s · 2 turns",
    ]);
  });

  test("claude's error result is an error line with the API message", () => {
    expect(shown("claude", sample("claude-2.1.197-json-error400.json"))).toEqual([
      "✗ API Error: 400 fake: scripted failure 400 · 0 in / 0 out · $0 · 0.2 s · 1 turn",
    ]);
  });

  test("opencode json: step markers hidden, the tool call with its result, text, per-step usage", () => {
    expect(shown("opencode", sample("opencode-1.18.33-format-json.ndjson"))).toEqual([
      `→ write ${work("opencode-1.18.33-format-json")}/hello.txt`,
      "← ok Wrote file successfully.",
      "· step done · 1,200 in / 40 out · $0.0039",
      "Done: wrote hello.txt",
      "· step done · 1,300 in / 12 out · $0.0041",
    ]);
    expect(shown("opencode", sample("opencode-1.18.33-format-json-error400.ndjson"))).toEqual(["✗ fake: scripted failure 400"]);
  });

  test("opencode's $0 for a model it has no price for reads as unpriced, as the Usage card and Cost column say", () => {
    const step = (cost: number, input: number) =>
      line("opencode", { type: "step_finish", part: { type: "step-finish", cost, tokens: { input, output: 4 } } });
    expect(step(0, 1200)).toEqual(["· step done · 1,200 in / 4 out · unpriced"]);
    expect(step(0.0134, 1200)).toEqual(["· step done · 1,200 in / 4 out · $0.013"]);
  });

  test("codex exec --json: file change started and done, the answer, turn usage; API errors unwrapped", () => {
    const file = `${work("codex-0.171.0-exec-json")}/hello.txt`;
    expect(shown("codex", sample("codex-0.171.0-exec-json.ndjson"))).toEqual([
      "· session started",
      `→ patch add ${file}`,
      `← ok add ${file}`,
      "Done: wrote hello.txt",
      "✓ turn done · 2,500 in / 52 out",
    ]);
    expect(shown("codex", sample("codex-0.171.0-exec-json-error400.ndjson"))).toEqual([
      "· session started",
      "✗ fake: scripted failure 400",
      "✗ fake: scripted failure 400",
    ]);
  });
});

describe("the Readable view's token counts", () => {
  const streams = {
    gemini: "gemini-0.61.0-stream-json.ndjson",
    claude: "claude-2.1.197-stream-json.ndjson",
    opencode: "opencode-1.18.33-format-json.ndjson",
    codex: "codex-0.171.0-exec-json.ndjson",
  };
  test.each(Object.entries(streams))("%s: its usage lines add up to the tokens the job's Usage card shows", (kind, name) => {
    const text = sample(name);
    const parser = cliAdapterFor(kind)?.createParser({ jobId: "j", prompt: "p", workdir: "/w", model: null } as unknown as JobSpec);
    for (const piece of text.split(/(?<=\n)/)) parser?.push(piece, "out");
    const card = parser?.finish().usage;
    const summary = { input: 0, output: 0 };
    for (const ev of allEvents(kind, logOf([["out", text]]))) {
      if (ev.type !== "usage") continue;
      summary.input += ev.usage.inputTokens ?? 0;
      summary.output += ev.usage.outputTokens ?? 0;
    }
    expect(card?.outputTokens).toBeGreaterThan(0);
    expect(summary).toEqual({ input: card?.inputTokens, output: card?.outputTokens });
  });
});

describe("readable lines", () => {
  test("lines that are not events read as printed, plain-text kinds are never parsed, stderr is never read as events", () => {
    expect(readableLine(agentKindModule("gemini"), "Warning: 256-color support not detected")).toEqual([
      { type: "output", stream: "out", text: "Warning: 256-color support not detected" },
    ]);
    expect(readableLine(agentKindModule("claude"), "{not json}")).toEqual([{ type: "output", stream: "out", text: "{not json}" }]);
    expect(readableLine(agentKindModule("codex"), '{"no":"type"}')).toEqual([{ type: "output", stream: "out", text: '{"no":"type"}' }]);
    const event = '{"type":"message","role":"assistant","content":"hi"}';
    expect(readableLine(agentKindModule("kiro"), event)).toEqual([{ type: "output", stream: "out", text: event }]);
    expect(allEvents("codex", logOf([["err", '{"type":"error","message":"x"}\n']]))).toEqual([
      { type: "output", stream: "err", text: '{"type":"error","message":"x"}' },
    ]);
  });

  test("an answer is kept whole however long; long arguments are cut with an ellipsis", () => {
    const long = "x".repeat(10_000);
    expect(line("opencode", { type: "text", part: { text: long } })).toEqual([long]);
    expect(line("gemini", { type: "message", role: "assistant", content: long, delta: true })).toEqual([long]);
    const [tool] = line("claude", { type: "assistant", message: { content: [{ type: "tool_use", name: "Bash", input: { command: long } }] } });
    expect(tool?.length).toBeLessThanOrEqual(READABLE_MAX_SHORT + 10);
    expect(tool?.startsWith("→ Bash xxx")).toBe(true);
  });

  test("failed tool results and shell commands", () => {
    expect(line("gemini", { type: "tool_result", tool_id: "t", status: "error", error: { type: "x", message: "file not found" } })).toEqual([
      "← error: file not found",
    ]);
    expect(line("claude", { type: "user", message: { content: [{ type: "tool_result", is_error: true, content: "permission denied" }] } })).toEqual([
      "← error: permission denied",
    ]);
    expect(line("codex", { type: "item.started", item: { type: "command_execution", command: "bash -lc ls", status: "in_progress" } })).toEqual([
      "→ shell bash -lc ls",
    ]);
    const done = {
      type: "item.completed",
      item: { type: "command_execution", command: "bash -lc ls", aggregated_output: "a\nhello.txt\n", exit_code: 0, status: "completed" },
    };
    expect(line("codex", done)).toEqual(["← ok exit 0 · hello.txt"]);
  });
});

describe("readable pages", () => {
  const stream = sample("claude-2.1.197-stream-json.ndjson");
  /** The sample as a worker prints it: in pieces that cut lines anywhere, stderr in between. */
  const pieces = (): Array<["out" | "err", string]> => {
    const out: Array<["out" | "err", string]> = [];
    for (let at = 0; at < stream.length; at += 97) out.push(["out", stream.slice(at, at + 97)]);
    out.splice(3, 0, ["err", "a warning\n"]);
    return out;
  };

  test("pages of any size give every event once, in order, whatever the chunks", () => {
    const file = logOf(pieces().flatMap(([s, text]) => atLastLineEnd(text).map((piece): ["out" | "err", string] => [s, piece])));
    const whole = allEvents("claude", file);
    expect(whole.map(readableText)).toContain("Done: wrote hello.txt");
    expect(whole).toContainEqual({ type: "output", stream: "err", text: "a warning" });
    for (const limit of [1, 64, 1000, 4096]) expect(allEvents("claude", file, limit)).toEqual(whole);
  });

  test("a line still being printed waits for its end; once the job has ended it is read as it is", () => {
    // As capture writes it: the record ends at the last newline, the open line is a record of its own.
    const file = logOf([
      ["out", '{"type":"system","subtype":"init","model":"m"}\n'],
      ["out", '{"type":"result","is_e'],
    ]);
    const running = readReadable(file, agentKindModule("claude"), 0, 1 << 20, false);
    expect(running.events.map(readableText)).toEqual(["· session started · m"]);
    expect(running.complete).toBe(false);
    const again = readReadable(file, agentKindModule("claude"), running.cursor, 1 << 20, false);
    expect(again).toEqual({ events: [], cursor: running.cursor, complete: false });
    const ended = readReadable(file, agentKindModule("claude"), running.cursor, 1 << 20, true);
    expect(ended.events).toEqual([{ type: "output", stream: "out", text: '{"type":"result","is_e' }]);
    expect(ended.complete).toBe(true);
  });

  test("3,000,000 bytes of short lines: every line read, in pages of a bounded number of events", () => {
    // As capture writes it: records of 64 KiB, each of many lines.
    const block = "x\n".repeat(32 * 1024);
    const chunks: Array<["out", string]> = [];
    for (let left = 3_000_000; left > 0; left -= block.length) chunks.push(["out", block.slice(0, Math.min(left, block.length))]);
    const file = logOf(chunks);
    let events = 0;
    let pages = 0;
    for (let cursor = 0; ; pages++) {
      const page = readReadable(file, agentKindModule("gemini"), cursor, 1 << 20, true);
      expect(page.events.length).toBeLessThanOrEqual(MAX_READABLE_EVENTS + block.length / 2);
      events += page.events.length;
      if (page.complete) break;
      expect(page.cursor).toBeGreaterThan(cursor);
      cursor = page.cursor;
    }
    expect(events).toBe(1_500_000);
    expect(pages).toBeGreaterThan(1);
    expect(lastReadableLine(file, agentKindModule("gemini"), true)).toBe("x");
  });

  test("an endless line is read in bounded pieces", () => {
    const file = logOf([["out", "y".repeat(3 * 1024 * 1024)]]);
    const page = readReadable(file, agentKindModule("kiro"), 0, 64 * 1024, false);
    expect(page.events).toHaveLength(1);
    expect(page.cursor).toBeGreaterThan(0);
  });

  test("pieces of a line too long to hold read as printed, never as events a worker aligned at the cut", () => {
    const forged = JSON.stringify({ type: "message", role: "assistant", content: "forged" });
    // The log's records are 256 KiB at most: one holds the line's first MiB and more, the next starts with the forged object.
    const file = logOf([
      ["out", `{"type":"tool_use","input":{"pad":"${"x".repeat(1024 * 1024 + 64)}",`],
      ["out", `"a":1}}\n${forged}\n`],
    ]);
    const texts = allEvents("gemini", file).map((e) => (e.type === "text" ? e.text : e.type));
    expect(texts.filter((t) => t === "forged")).toHaveLength(1);
    const cut = logOf([
      ["out", `{"x":"${"x".repeat(1024 * 1024 + 64)}`],
      ["out", `${forged}\n`],
    ]);
    expect(allEvents("gemini", cut).some((e) => e.type === "text")).toBe(false);
  });

  test("the latest line of a running job: the answer's last line so far, not a JSON event still being printed", () => {
    const ev = (e: unknown) => `${JSON.stringify(e)}\n`;
    const delta = (text: string) => ev({ type: "message", role: "assistant", content: text, delta: true });
    const file = logOf([
      // More than the tail reads, so it starts inside this line, which must not show.
      ["out", ev({ type: "message", role: "user", content: "p".repeat(100 * 1024) })],
      ["out", ev({ type: "init", model: "m" })],
      ["out", `${delta("tick 1\ntick")}${delta(" 2\n")}${delta("tick 3 is half")}`],
      ["err", "a warning\n"],
      ["out", '{"type":"message","role":"assis'],
    ]);
    expect(lastReadableLine(file, agentKindModule("gemini"), false)).toBe("a warning");
    const out = logOf([
      ["out", `${delta("tick 1\ntick")}${delta(" 2\n\n")}`],
      ["out", '{"type":"message","role":"assis'],
    ]);
    expect(lastReadableLine(out, agentKindModule("gemini"), false)).toBe("tick 2");
    expect(lastReadableLine(out, agentKindModule("gemini"), true)).toBe('{"type":"message","role":"assis');
    const long = logOf([["out", ev({ type: "init", model: "m" }) + ev({ type: "message", role: "user", content: "p".repeat(100 * 1024) })]]);
    expect(lastReadableLine(long, agentKindModule("gemini"), false)).toMatch(/^› p{100,}…$/);
  });
});
