import type { ReadableEvent } from "@corral/shared";
import { jsonLinesParser, num, obj, str, UsageSum } from "../json-lines.js";
import { errorMessage, readable } from "../readable.js";
import { codexSessionModel } from "./codex-session.js";
import type { CliAgentKind, Json, JobSpec } from "../types.js";
import { resumedSession, sessionIdOf, UUID } from "../worker-session.js";
import { cliFields } from "./fields.js";

/**
 * `codex exec --json`: the answer is the last completed `agent_message` item; `turn.completed`
 * has the turn's tokens (input includes cached, output includes reasoning). There is no cost
 * and no model in the events: the model is the one Corral passed, else the one Codex's session
 * record names (`sessionModel`, read once the run has ended), and the price table prices it.
 */
/** A turn's tokens: the Usage card (their sum) and the Readable turn lines both count these. */
function turnTokens(usage: Json | undefined) {
  return { input: num(usage?.input_tokens) ?? 0, output: num(usage?.output_tokens) ?? 0, cached: num(usage?.cached_input_tokens) ?? 0 };
}

export function codexParser(spec: JobSpec) {
  const sum = new UsageSum();
  const model = spec.model ?? undefined;
  let answer: string | undefined;
  let error: string | undefined;
  let thread: string | undefined;
  return jsonLinesParser({
    event(ev) {
      if (ev.type === "thread.started") {
        thread = sessionIdOf(ev.thread_id, UUID) ?? thread;
        return undefined;
      }
      if (ev.type === "item.completed") {
        const item = obj(ev.item);
        if (item?.type === "agent_message") answer = str(item.text) ?? answer;
        return undefined;
      }
      if (ev.type === "turn.completed") {
        const t = turnTokens(obj(ev.usage));
        sum.add(t.input, t.output, t.cached);
        return sum.report(model);
      }
      if (ev.type === "turn.failed") error = str(obj(ev.error)?.message) ?? error ?? "codex turn failed";
      else if (ev.type === "error") error = str(ev.message) ?? error;
      return undefined;
    },
    finish() {
      const text = answer?.trim();
      return {
        finalText: text || undefined,
        ...(sum.seen ? { usage: sum.report(model) } : {}),
        ...(error ? { error } : {}),
        ...(thread ? { sessionId: thread } : {}),
      };
    },
  });
}

function changes(value: unknown): string {
  if (!Array.isArray(value)) return "";
  return value
    .map(obj)
    .map((c) => `${str(c?.kind) ?? "edit"} ${str(c?.path) ?? ""}`.trim())
    .join(", ");
}

/** An item's start is its tool call, its completion the result; `item.updated` adds nothing to read. */
function itemStarted(item: Json | undefined): ReadableEvent[] {
  if (item?.type === "command_execution") return [readable.call("shell", { command: item.command })];
  if (item?.type === "file_change") return [readable.call("patch", changes(item.changes))];
  if (item?.type === "mcp_tool_call") return [readable.call(`${str(item.server) ?? "mcp"}.${str(item.tool) ?? "tool"}`, item.arguments)];
  if (item?.type === "web_search") return [readable.call("web_search", { query: item.query })];
  return [];
}

function itemCompleted(item: Json | undefined): ReadableEvent[] {
  switch (item?.type) {
    case "agent_message":
      return [readable.text(str(item.text))];
    case "reasoning":
      return [readable.thinking(str(item.text))];
    case "command_execution": {
      const code = num(item.exit_code);
      const output = str(item.aggregated_output)?.trim().split("\n").at(-1);
      const detail = [code !== undefined ? `exit ${code}` : "", output ?? ""].filter(Boolean).join(" · ");
      return [readable.result(item.status !== "failed" && (code ?? 0) === 0, detail)];
    }
    case "file_change":
      return [readable.result(item.status !== "failed", changes(item.changes))];
    case "mcp_tool_call":
      return [readable.result(item.status !== "failed" && !item.error, str(obj(item.error)?.message))];
    case "web_search":
      return [readable.result(true, str(item.query))];
    case "error":
      return [readable.error(errorMessage(str(item.message)) ?? "error")];
    default:
      return [];
  }
}

function readEvent(ev: Json): ReadableEvent[] {
  switch (ev.type) {
    case "thread.started":
      return [{ type: "session" }];
    case "item.started":
      return itemStarted(obj(ev.item));
    case "item.completed":
      return itemCompleted(obj(ev.item));
    case "turn.completed": {
      const t = turnTokens(obj(ev.usage));
      return [readable.usage("turn", { inputTokens: t.input, outputTokens: t.output })];
    }
    case "turn.failed":
      return [readable.error(errorMessage(str(obj(ev.error)?.message)) ?? "turn failed")];
    case "error":
      return [readable.error(errorMessage(str(ev.message)) ?? "error")];
    default:
      return [];
  }
}

/**
 * `codex exec` runs without questions; `workspace-write` lets it write in its workdir only, and
 * `--json` gives the answer and token counts as events. The prompt comes after `--`, so neither
 * an option (`--version`) nor one of exec's subcommands (`review`, `resume`, `help`) can be
 * smuggled in as a prompt; the model is glued to its option (`--model=M`). A prompt of exactly
 * `-` still means "read stdin" to codex, which gets nothing there and fails the job.
 *
 * `thread.started` names the run's thread; a follow-up is `codex exec [OPTIONS] resume <id> -- PROMPT`.
 * exec's options (`--json`, `--sandbox`, `-C`, `--model`) stay before `resume`, which has no
 * `--sandbox` or `-C` of its own. The id is a UUID: `resume` also takes a thread name, and the
 * prompt alone after `--last`, so nothing else is passed there.
 */
export const codex: CliAgentKind = {
  kind: "codex",
  provider: "openai",
  builtins: [{ name: "codex", description: "OpenAI Codex CLI (codex exec)" }],
  fields: cliFields(),
  retries: true,
  resumes: true,
  readEvent,
  cli: {
    defaultBinary: "codex",
    installHint: "install it with npm install -g @openai/codex",
    invocation(spec, binary) {
      const model = spec.model ? [`--model=${spec.model}`] : [];
      const session = resumedSession(spec, UUID);
      const resume = session ? ["resume", session] : [];
      return {
        command: binary,
        args: ["exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write", "-C", spec.workdir, ...model, ...resume, "--", spec.prompt],
        env: {},
        cwd: spec.workdir,
      };
    },
    createParser: codexParser,
    sessionModel: codexSessionModel,
    resumesAnywhere: true,
    stateDirs: [".codex"],
    // OPENAI_API_KEY, OPENAI_BASE_URL…; CODEX_HOME and CODEX_API_KEY.
    ownEnv: () => ["OPENAI_*", "CODEX_*"],
    versionArgs: ["--version"],
  },
};
