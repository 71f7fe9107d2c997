import { type AgentFieldChoice, type AgentTool, plural, type ReadableEvent } from "@corral/shared";
import { BoundedText, jsonLinesParser, num, obj, str, UsageSum } from "../json-lines.js";
import { blockText, readable } from "../readable.js";
import type { CliAgentKind, Json, JobSpec, UsageReport } from "../types.js";
import { resumedSession, sessionIdOf, UUID } from "../worker-session.js";
import { cliFields, field } from "./fields.js";

/** Anthropic counts cache reads and writes apart from `input_tokens`; Corral's input includes both. */
function anthropicTokens(usage: Json | undefined) {
  const cacheRead = num(usage?.cache_read_input_tokens) ?? 0;
  const cacheWrite = num(usage?.cache_creation_input_tokens) ?? 0;
  return { input: (num(usage?.input_tokens) ?? 0) + cacheRead + cacheWrite, output: num(usage?.output_tokens) ?? 0, cached: cacheRead };
}

/**
 * `claude -p --output-format stream-json --verbose` (or `json`, whose one object is the same
 * `result` line). Each `assistant` line's usage is the message_start snapshot: its input is
 * right but its output is 1, so their sum is only a running lower bound for limits; the
 * `result` line has the totals, the cost Claude computed, and the final text. Errors say
 * `is_error: true` even when `subtype` is "success".
 */
export function claudeParser(spec: JobSpec) {
  const running = new UsageSum();
  const lastText = new BoundedText();
  let model = spec.model ?? undefined;
  let result: { text?: string; usage?: UsageReport; error?: string } | undefined;
  let session: string | undefined;
  return jsonLinesParser({
    event(ev) {
      // The first id is the run's own (init comes first); later lines only repeat it.
      session ??= sessionIdOf(ev.session_id, UUID);
      if (ev.type === "system" && ev.subtype === "init") {
        model = str(ev.model) ?? model;
        return model ? { model } : undefined;
      }
      if (ev.type === "assistant") {
        const message = obj(ev.message);
        model = str(message?.model) ?? model;
        const blocks = Array.isArray(message?.content) ? message.content : [];
        const texts = blocks
          .map(obj)
          .filter((b) => b?.type === "text")
          .map((b) => str(b?.text) ?? "");
        if (texts.length) lastText.set(texts.join(""));
        const t = anthropicTokens(obj(message?.usage));
        running.add(t.input, t.output, t.cached);
        return running.report(model);
      }
      if (ev.type === "result") {
        const t = anthropicTokens(obj(ev.usage));
        const models = Object.entries(obj(ev.modelUsage) ?? {});
        const main = models.sort(([, a], [, b]) => (num(obj(b)?.costUSD) ?? 0) - (num(obj(a)?.costUSD) ?? 0))[0]?.[0];
        const cost = num(ev.total_cost_usd);
        const usage: UsageReport = {
          ...((main ?? model) ? { model: main ?? model } : {}),
          inputTokens: t.input,
          outputTokens: t.output,
          cachedInputTokens: t.cached,
          ...(cost !== undefined ? { costUsd: cost } : {}),
        };
        const text = str(ev.result);
        // A run that never reached the model (`--resume` of a session it cannot find) has no
        // result text, only `errors`.
        const errors = (Array.isArray(ev.errors) ? ev.errors : []).map(str).filter(Boolean).join("; ");
        result = { text, usage, ...(ev.is_error === true ? { error: text || errors || `claude reported an error (${String(ev.subtype)})` } : {}) };
        return usage;
      }
      return undefined;
    },
    finish() {
      const id = session ? { sessionId: session } : {};
      if (result)
        return { finalText: result.text?.trim() || undefined, usage: result.usage, ...(result.error ? { error: result.error } : {}), ...id };
      return { finalText: lastText.value(), ...(running.seen ? { usage: running.report(model) } : {}), ...id };
    },
  });
}

/** One line per block: the answer, thinking, tool calls and their results; the result line's totals. */
function readEvent(ev: Json): ReadableEvent[] {
  if (ev.type === "system") {
    if (ev.subtype !== "init") return [{ type: "note", text: String(ev.subtype ?? "system") }];
    const model = str(ev.model);
    return [{ type: "session", ...(model ? { model } : {}), ...(Array.isArray(ev.tools) ? { tools: ev.tools.length } : {}) }];
  }
  if (ev.type === "assistant" || ev.type === "user") {
    const message = obj(ev.message);
    const blocks = Array.isArray(message?.content) ? message.content : [];
    const events = blocks.map(obj).flatMap((b): ReadableEvent[] => {
      if (!b) return [];
      if (b.type === "text") return [ev.type === "assistant" ? readable.text(str(b.text)) : readable.prompt(str(b.text))];
      if (b.type === "thinking") return [readable.thinking(str(b.thinking))];
      if (b.type === "tool_use") return [readable.call(str(b.name) ?? "tool", b.input)];
      if (b.type === "tool_result") return [readable.result(b.is_error !== true, blockText(b.content))];
      return [];
    });
    if (!events.length && typeof message?.content === "string") events.push(readable.prompt(message.content));
    return events;
  }
  if (ev.type === "result") {
    const t = anthropicTokens(obj(ev.usage));
    const turns = num(ev.num_turns);
    const usage = {
      inputTokens: t.input,
      outputTokens: t.output,
      costUsd: num(ev.total_cost_usd),
      durationMs: num(ev.duration_ms),
      extra: turns !== undefined ? [plural(turns, "turn")] : [],
    };
    if (ev.is_error === true) return [readable.error(str(ev.result) ?? String(ev.subtype), usage)];
    return [readable.usage("job", usage)];
  }
  return [];
}

/**
 * `claude -p PROMPT` may only write in its workdir: `acceptEdits` lets it create and edit files
 * there without asking, and works as root, where `--dangerously-skip-permissions` is refused.
 * `stream-json` (which needs `--verbose` with -p) gives the answer, tokens and cost as it runs.
 * `-p` takes no value: the prompt is the positional argument, after `--` so a prompt such as
 * `--version` is sent to the model instead of being read as an option; the model is glued to
 * its option (`--model=M`) for the same reason.
 *
 * An agent's `role` is appended to Claude Code's system prompt (`--append-system-prompt=`) and its
 * `tools` choose the built-in tools it may use (`--tools=`, Claude's names: read_file is Read,
 * write_file Write and Edit…); both glued to their options, so a value cannot be read as another option.
 *
 * Every event carries the run's `session_id`; a follow-up resumes it with `--resume=<id>` (glued,
 * as `--resume` takes an optional value). Claude keeps its sessions per working directory
 * (`~/.claude/projects/<cwd>/<id>.jsonl`), so a follow-up finds its session only in the same workdir.
 */
/** Claude Code's built-in tools for each of Corral's tool names (`--tools`), as the orchestrator's `tools` mean them. */
const CLAUDE_TOOLS: Record<AgentTool, string[]> = {
  read_file: ["Read"],
  write_file: ["Write", "Edit"],
  list_files: ["Glob"],
  glob: ["Glob"],
  grep: ["Grep"],
  bash: ["Bash"],
  http_get: ["WebFetch"],
};

/** Claude Code's `--tools` value for an agent's tools: each Corral tool's Claude tools, once each. */
export const claudeTools = (tools: readonly AgentTool[]) => [...new Set(tools.flatMap((t) => CLAUDE_TOOLS[t]))].join(",");

const claudeRole = field({
  name: "role",
  label: "Role",
  hint: "added to Claude Code's system prompt (--append-system-prompt); empty: none",
  input: { type: "multiline", rows: 3 },
  whenEmpty: "default",
});
const claudeToolChoices: AgentFieldChoice[] = [
  { value: "read_file", label: "Read" },
  { value: "write_file", label: "Write, Edit" },
  { value: "glob", label: "Glob" },
  { value: "grep", label: "Grep" },
  { value: "bash", label: "Bash" },
  { value: "http_get", label: "WebFetch" },
];
const claudeToolsField = field({
  name: "tools",
  label: "Tools (--tools)",
  hint: "the built-in tools Claude Code may use; none ticked: its default set",
  input: { type: "checklist", options: claudeToolChoices },
  whenEmpty: "default",
});

export const claude: CliAgentKind = {
  kind: "claude",
  provider: "anthropic",
  builtins: [{ name: "claude", description: "Claude Code in print mode, allowed to edit files in its workdir" }],
  fields: cliFields([claudeRole, claudeToolsField]),
  retries: true,
  resumes: true,
  readEvent,
  cli: {
    defaultBinary: "claude",
    installHint: "install it with npm install -g @anthropic-ai/claude-code",
    invocation(spec, binary) {
      const model = spec.model ? [`--model=${spec.model}`] : [];
      const session = resumedSession(spec, UUID);
      const resume = session ? [`--resume=${session}`] : [];
      const { role, tools } = spec.agent;
      const shaped = [...(role ? [`--append-system-prompt=${role}`] : []), ...(tools ? [`--tools=${claudeTools(tools)}`] : [])];
      return {
        command: binary,
        args: [
          "-p",
          "--output-format",
          "stream-json",
          "--verbose",
          "--permission-mode",
          "acceptEdits",
          ...shaped,
          ...resume,
          ...model,
          "--",
          spec.prompt,
        ],
        env: {},
        cwd: spec.workdir,
      };
    },
    createParser: claudeParser,
    stateDirs: [".claude", ".claude.json"],
    // Its key and endpoint (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL…), CLAUDE_CODE_* and CLAUDE_CONFIG_DIR, its switches (DISABLE_TELEMETRY…) and limits.
    ownEnv: () => [
      "ANTHROPIC_*",
      "CLAUDE_*",
      "DISABLE_*",
      "MAX_THINKING_TOKENS",
      "MCP_TIMEOUT",
      "MCP_TOOL_TIMEOUT",
      "BASH_DEFAULT_TIMEOUT_MS",
      "BASH_MAX_TIMEOUT_MS",
      "BASH_MAX_OUTPUT_LENGTH",
    ],
    versionArgs: ["--version"],
  },
};
