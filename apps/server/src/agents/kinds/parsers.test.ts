import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import type { AgentRow } from "../../db/schema.js";
import type { JobSpec, OutputParser, UsageReport } from "../types.js";
import { claudeParser } from "./claude.js";
import { codexParser } from "./codex.js";
import { codexSessionModel, rolloutModel } from "./codex-session.js";
import { geminiParser, INELIGIBLE_ACCOUNT } from "./gemini.js";
import { opencodeParser } from "./opencode.js";

const samples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../test/fixtures/samples");
const sample = (name: string) => readFileSync(path.join(samples, name), "utf8");

const spec = (model: string | null): JobSpec => ({
  jobId: "abc123",
  prompt: "Create hello.txt containing a greeting, then say what you did.",
  workdir: "/w",
  model,
  agent: { name: "x", kind: "gemini", provider: "google" } as AgentRow,
});

/** Feeds stdout (and stderr) line by line, as the job engine does; returns every streamed usage. */
function feed(parser: OutputParser, stdout: string, stderr = ""): UsageReport[] {
  const streamed: UsageReport[] = [];
  const lines = (text: string) => text.split(/(?<=\n)/).filter(Boolean);
  for (const line of lines(stderr)) parser.push(line, "err");
  for (const line of lines(stdout)) {
    const usage = parser.push(line, "out");
    if (usage) streamed.push(usage);
  }
  return streamed;
}

describe("gemini 0.61.0 -o stream-json", () => {
  test("joins the answer's deltas after the last tool call and counts thoughts as output", () => {
    const parser = geminiParser(spec("gemini-2.5-flash"));
    const streamed = feed(parser, sample("gemini-0.61.0-stream-json.ndjson"), sample("gemini-0.61.0-stream-json.stderr.txt"));
    const result = parser.finish();
    expect(result.finalText).toBe("Done: wrote hello.txt");
    // prompt 2500 (cached 100 included), candidates 52 + thoughts 7 (= total 2559 − 2500 − 52).
    expect(result.usage).toEqual({ model: "gemini-2.5-flash", inputTokens: 2500, outputTokens: 59, cachedInputTokens: 100 });
    expect(result.usage?.costUsd).toBeUndefined();
    expect(result.error).toBeUndefined();
    expect(streamed.at(-1)).toEqual(result.usage);
  });

  test("an API error (exit 144, JSON on stderr, stdout empty) leaves no answer and no usage", () => {
    const parser = geminiParser(spec("gemini-2.5-flash"));
    feed(parser, sample("gemini-0.61.0-json-error400.json"), sample("gemini-0.61.0-json-error400.stderr.txt"));
    expect(parser.finish()).toEqual({});
  });
});

describe("gemini on an individual Google account since 2026-06-18", () => {
  // As Gemini CLI prints it at sign-in, before any event (google-gemini/gemini-cli#28229, #29279).
  const refusal =
    "Error authenticating: IneligibleTierError: This client is no longer supported for Gemini Code Assist for individuals. " +
    "To continue using Gemini, please migrate to the Antigravity suite of products: https://antigravity.google\n" +
    "  ineligibleTiers: [ { reasonCode: 'UNSUPPORTED_CLIENT', tierId: 'free-tier', tierName: 'Gemini Code Assist for individuals' } ]\n";

  test("the sign-in refusal on stderr becomes an error that says what happened and the ways on", () => {
    const parser = geminiParser(spec(null));
    feed(parser, "", refusal);
    // `failure`: the job's error is this, not "exit code 1" and the raw refusal.
    expect(parser.finish()).toEqual({ error: INELIGIBLE_ACCOUNT, failure: INELIGIBLE_ACCOUNT });
    expect(INELIGIBLE_ACCOUNT).toMatch(/^Gemini CLI no longer serves individual Google accounts .*since 2026-06-18/);
    expect(INELIGIBLE_ACCOUNT).toMatch(/GEMINI_API_KEY.*agy agent.*CORRAL_GEMINI_AGENT=agy/);
  });

  test("read in pieces of any size, and from an error event on stdout too", () => {
    const parser = geminiParser(spec(null));
    for (const piece of refusal.match(/[\s\S]{1,7}/g) ?? []) parser.push(piece, "err");
    expect(parser.finish().error).toBe(INELIGIBLE_ACCOUNT);
    const onStdout = geminiParser(spec(null));
    feed(onStdout, `${JSON.stringify({ type: "error", severity: "error", message: refusal.split("\n")[0] })}\n`);
    expect(onStdout.finish().error).toBe(INELIGIBLE_ACCOUNT);
  });

  test("other failures keep their own text", () => {
    const parser = geminiParser(spec(null));
    feed(parser, "", "Error authenticating: invalid_grant\nsome stack\n");
    expect(parser.finish()).toEqual({});
  });
});

describe("claude 2.1.197 --output-format stream-json --verbose", () => {
  test("takes answer, totals and cost from the result line, not the per-message snapshots", () => {
    const parser = claudeParser(spec("claude-sonnet-4-5"));
    const streamed = feed(parser, sample("claude-2.1.197-stream-json.ndjson"));
    const result = parser.finish();
    expect(result.finalText).toBe("Done: wrote hello.txt");
    // input 2500 + cache read 100 + cache write 50; output 52 (the snapshots said 1 and 1).
    expect(result.usage).toEqual({
      model: "claude-sonnet-4-5",
      inputTokens: 2650,
      outputTokens: 52,
      cachedInputTokens: 100,
      costUsd: 0.008497499999999998,
    });
    // While it runs, usage grows message by message: input is right, output is a lower bound.
    // The init line names the model first.
    expect(streamed[0]).toEqual({ model: "claude-sonnet-4-5" });
    expect(streamed.slice(1).map((u) => u.inputTokens)).toEqual([1350, 2650, 2650]);
    expect(streamed[2]?.outputTokens).toBe(2);
  });

  test("the json mode's single object reads the same", () => {
    const parser = claudeParser(spec(null));
    feed(parser, sample("claude-2.1.197-json.json"));
    const result = parser.finish();
    expect(result.finalText).toBe("Done: wrote hello.txt");
    expect(result.usage).toMatchObject({ model: "claude-sonnet-4-5", inputTokens: 2650, outputTokens: 52, costUsd: 0.008497499999999998 });
  });

  test("is_error with subtype success is an error, with the API's message", () => {
    const parser = claudeParser(spec("claude-sonnet-4-5"));
    feed(parser, sample("claude-2.1.197-json-error400.json"));
    const result = parser.finish();
    expect(result.error).toBe("API Error: 400 fake: scripted failure 400");
    expect(result.usage).toMatchObject({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
  });
});

describe("opencode 1.18.33 run --format json", () => {
  test("sums tokens and cost over step_finish lines, streaming each step, and keeps the last text part", () => {
    const parser = opencodeParser(spec("fake/fake-model"));
    const streamed = feed(parser, sample("opencode-1.18.33-format-json.ndjson"));
    const result = parser.finish();
    expect(result.finalText).toBe("Done: wrote hello.txt");
    // input 1100 + cache read 100 + 1300; output 33 + reasoning 7 + 12.
    expect(result.usage).toMatchObject({ model: "fake/fake-model", inputTokens: 2500, outputTokens: 52, cachedInputTokens: 100 });
    expect(result.usage?.costUsd).toBeCloseTo(0.00393 + 0.00408, 10);
    expect(streamed).toHaveLength(2);
    expect(streamed[0]).toMatchObject({ inputTokens: 1200, outputTokens: 40, cachedInputTokens: 100 });
  });

  test("an API error event gives its message (and the session, which a follow-up can still resume)", () => {
    const parser = opencodeParser(spec("fake/fake-model"));
    feed(parser, sample("opencode-1.18.33-format-json-error400.ndjson"));
    expect(parser.finish()).toEqual({ finalText: undefined, error: "fake: scripted failure 400", sessionId: "ses_dd86794e0ffeGsqwnCAVow9wye" });
  });
});

describe("codex 0.171.0 exec --json", () => {
  test("answer from the last agent_message, tokens from turn.completed, model from the job", () => {
    const parser = codexParser(spec("gpt-5.5"));
    const streamed = feed(parser, sample("codex-0.171.0-exec-json.ndjson"), sample("codex-0.171.0-exec-json.stderr.txt"));
    const result = parser.finish();
    expect(result.finalText).toBe("Done: wrote hello.txt");
    expect(result.usage).toEqual({ model: "gpt-5.5", inputTokens: 2500, outputTokens: 52, cachedInputTokens: 100 });
    expect(streamed).toEqual([result.usage]);
  });

  test("without -m the events name no model; the thread id leads to Codex's session record, which does", () => {
    const parser = codexParser(spec(null));
    feed(parser, sample("codex-0.171.0-exec-json.ndjson"));
    const result = parser.finish();
    expect(result.usage?.model).toBeUndefined();
    expect(result.sessionId).toBe("01a22798-7714-7273-bcc1-bb70660c00d3");
    expect(rolloutModel(sample("codex-0.171.0-rollout.jsonl"))).toBe("gpt-5.5");
  });

  test("the session record is found under CODEX_HOME (else ~/.codex) by thread id, in the latest days", () => {
    const home = mkdtempSync(path.join(os.tmpdir(), "corral-codex-"));
    try {
      const id = "01a22e14-960b-7a32-9b19-d07c1c9bc087";
      const day = path.join(home, ".codex", "sessions", "2026", "11", "30");
      mkdirSync(day, { recursive: true });
      writeFileSync(path.join(day, `rollout-2026-11-30T20-10-30-${id}.jsonl`), sample("codex-0.171.0-rollout.jsonl"));
      mkdirSync(path.join(home, ".codex", "sessions", "2026", "12", "01"), { recursive: true });
      expect(codexSessionModel(id, { HOME: home })).toBe("gpt-5.5");
      expect(codexSessionModel(id, { HOME: "/nonexistent", CODEX_HOME: path.join(home, ".codex") })).toBe("gpt-5.5");
      expect(codexSessionModel("01a22e14-0000-7a32-9b19-d07c1c9bc087", { HOME: home })).toBeUndefined();
      // The id becomes part of a file name: only a UUID is looked up.
      expect(codexSessionModel("../../../etc/passwd", { HOME: home })).toBeUndefined();
      expect(codexSessionModel(id, { HOME: path.join(home, "nothing-here") })).toBeUndefined();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("turn.failed gives the API error", () => {
    const parser = codexParser(spec("gpt-5.5"));
    feed(parser, sample("codex-0.171.0-exec-json-error400.ndjson"));
    const result = parser.finish();
    expect(result.error).toContain("fake: scripted failure 400");
    expect(result.finalText).toBeUndefined();
    expect(result.usage).toBeUndefined();
  });
});

test("output with no JSON events at all (a CLI without the JSON flag) is kept as plain text", () => {
  const parser = geminiParser(spec(null));
  feed(parser, sample("gemini-0.61.0-text.txt"));
  expect(parser.finish()).toEqual({ finalText: sample("gemini-0.61.0-text.txt").trim() });
});

test("a huge answer is bounded", () => {
  const parser = geminiParser(spec(null));
  const delta = JSON.stringify({ type: "message", role: "assistant", content: "x".repeat(64 * 1024), delta: true });
  for (let i = 0; i < 10; i++) parser.push(`${delta}\n`, "out");
  const text = parser.finish().finalText ?? "";
  expect(text.length).toBeLessThan(300 * 1024);
  expect(text.endsWith("[…truncated]")).toBe(true);
});

/**
 * Each CLI's own session id, which a follow-up resumes: from the real samples of a first run and
 * of the follow-up that resumed it (the `*-resume-*` samples, recorded by the compatibility suite's
 * resume.test.ts), where the id stays the same.
 */
describe("session ids", () => {
  const read = (parser: OutputParser, stdout: string, stderr = "") => {
    feed(parser, stdout, stderr);
    return parser.finish();
  };

  test.each([
    ["claude stream-json", () => claudeParser(spec(null)), "claude-2.1.197-stream-json.ndjson", "4787530e-89f1-4301-bb1a-75b8d5e78f04"],
    ["claude json", () => claudeParser(spec(null)), "claude-2.1.197-json.json", "907398aa-290e-40ba-985f-d47b0ea88fba"],
    ["claude resumed", () => claudeParser(spec(null)), "claude-2.1.197-resume-stream-json.ndjson", "5d0a488a-b058-4fce-81c2-5a11999e5696"],
    ["gemini stream-json", () => geminiParser(spec(null)), "gemini-0.61.0-stream-json.ndjson", "17efe6a9-f5c3-415b-94af-1f84e9d64c3b"],
    ["gemini resumed", () => geminiParser(spec(null)), "gemini-0.61.0-resume-stream-json.ndjson", "609cd9c0-19f5-4efb-b87a-6d2060d86960"],
    ["opencode format json", () => opencodeParser(spec(null)), "opencode-1.18.33-format-json.ndjson", "ses_dd867c090ffeQAzhdrkaTcP0pw"],
    ["opencode resumed", () => opencodeParser(spec(null)), "opencode-1.18.33-resume-format-json.ndjson", "ses_dd1569bafffebPjcRWcBAjfqo4"],
    ["codex exec --json", () => codexParser(spec(null)), "codex-0.171.0-exec-json.ndjson", "01a22798-7714-7273-bcc1-bb70660c00d3"],
    ["codex resumed", () => codexParser(spec(null)), "codex-0.171.0-resume-exec-json.ndjson", "01a22ea9-a5f6-7ad3-b96a-599a4f5318dd"],
  ])("%s", (_, parser, file, id) => {
    expect(read(parser(), sample(file)).sessionId).toBe(id);
  });

  test("the follow-ups' samples are answers to the resumed conversation", () => {
    expect(read(claudeParser(spec(null)), sample("claude-2.1.197-resume-stream-json.ndjson")).finalText).toBe("Done: wrote followup.txt");
    expect(read(geminiParser(spec(null)), sample("gemini-0.61.0-resume-stream-json.ndjson")).finalText).toBe("Done: wrote followup.txt");
    expect(read(opencodeParser(spec(null)), sample("opencode-1.18.33-resume-format-json.ndjson")).finalText).toBe("Done: wrote followup.txt");
    expect(read(codexParser(spec(null)), sample("codex-0.171.0-resume-exec-json.ndjson")).finalText).toBe("Done: wrote followup.txt");
  });

  test("claude resuming a session it does not have: its result line has no text, the error is in `errors`", () => {
    const result = read(claudeParser(spec(null)), sample("claude-2.1.197-resume-unknown-stream-json.ndjson"));
    expect(result.error).toBe("No conversation found with session ID: 0b9e1f7a-1111-4222-8333-444455556666");
    expect(result.finalText).toBeUndefined();
  });

  test("the run's own id is the first one: a later line of another session (a subagent's) does not replace it", () => {
    const line = (ev: Record<string, unknown>) => `${JSON.stringify(ev)}\n`;
    const own = "ses_dd867c090ffeQAzhdrkaTcP0pw";
    const child = "ses_dd1569bafffebPjcRWcBAjfqo4";
    const stdout = line({ type: "step_start", sessionID: own, part: {} }) + line({ type: "text", sessionID: child, part: { text: "x" } });
    expect(read(opencodeParser(spec(null)), stdout).sessionId).toBe(own);
    const uuid = "4787530e-89f1-4301-bb1a-75b8d5e78f04";
    const other = "5d0a488a-b058-4fce-81c2-5a11999e5696";
    const claudeOut = line({ type: "system", subtype: "init", session_id: uuid }) + line({ type: "assistant", session_id: other, message: {} });
    expect(read(claudeParser(spec(null)), claudeOut).sessionId).toBe(uuid);
  });

  // A worker's output is untrusted: an id of the wrong shape is not kept, so it never reaches a
  // follow-up's command line or a file path.
  test.each(["--help", "latest", "3", "../../x", "ses_../../x", "4787530e-89f1-4301-bb1a-75b8d5e78f04 --version"])(
    "%j is not kept as a session id",
    (bad) => {
      const line = (ev: Record<string, unknown>) => `${JSON.stringify(ev)}\n`;
      expect(read(claudeParser(spec(null)), line({ type: "system", subtype: "init", session_id: bad })).sessionId).toBeUndefined();
      expect(read(geminiParser(spec(null)), line({ type: "init", session_id: bad })).sessionId).toBeUndefined();
      expect(read(opencodeParser(spec(null)), line({ type: "text", sessionID: bad, part: { text: "x" } })).sessionId).toBeUndefined();
      expect(read(codexParser(spec(null)), line({ type: "thread.started", thread_id: bad })).sessionId).toBeUndefined();
    },
  );
});
