import { McpJobInputSchema, plural, type ReadableEvent } from "@corral/shared";
import { BoundedText, jsonLinesParser, num, obj, str } from "../json-lines.js";
import { errorMessage, readable, short } from "../readable.js";
import type { CliAgentKind, Json, JobSpec, OutputParser, UsageReport } from "../types.js";
import { resumedSession, sessionIdOf, UUID } from "../worker-session.js";
import { cliFields } from "./fields.js";

/*
 * Google's Antigravity CLI (`agy`), the successor of Gemini CLI for individual Google accounts
 * (free, Google AI Pro and Ultra), which Gemini CLI stopped serving on 2026-06-18. It is closed
 * source and was never run here: everything below follows its documentation and what its users
 * published from real runs, each source named where it is used (docs/agents.md lists them).
 *
 * `agy --print=PROMPT --output-format=stream-json` (print mode's machine-readable output, since
 * 1.1.8: https://antigravity.google/docs/cli/headless, google-antigravity/antigravity-cli#408)
 * prints one JSON object a line, named by its `event` key, not `type`:
 *
 *   {"event":"init","conversation_id":"<uuid>","init":{"cwd":…,"model":…,"agent":…,"permission_mode":…,"tools":[…]}}
 *   {"event":"step_update","step_update":{"conversation_id":…,"step_index":3,"state":"ACTIVE"|"DONE",
 *     "step_type":"user_input"|"agent_response"|"tool"|"system_message"|"checkpoint"|…,
 *     "text_delta":…,"tool_name":…,"tool_info":{"name":…,"parameters":…,"output":…},"usage":{…}}}
 *   {"event":"result","result":{"conversation_id":…,"status":"SUCCESS"|"ERROR"|…,"response":…,"error":…,
 *     "duration_seconds":1.34,"num_turns":1,"usage":{"input_tokens":…,"output_tokens":…,
 *     "thinking_tokens":…,"cache_read_tokens":…,"total_tokens":…}}}
 *
 * exactly one `result` closing the turn.
 */

/**
 * A step's or the run's tokens. In a published 1.1.8 envelope (antigravity-cli#408) a one-word
 * answer had output_tokens 95 with thinking_tokens 89 and total = input + output: output already
 * holds the thinking, which Gemini bills as output, so it is not added again. cache_read_tokens is
 * part of the input, as the Gemini API counts cached prompt tokens.
 */
function tokensOf(usage: Json | undefined) {
  return {
    input: num(usage?.input_tokens) ?? 0,
    output: num(usage?.output_tokens) ?? 0,
    cached: num(usage?.cache_read_tokens) ?? 0,
    thinking: num(usage?.thinking_tokens),
  };
}

/** What a result's `error` says: a string in the published captures, an object's message if a build nests it. */
function errorText(value: unknown): string | undefined {
  return errorMessage(str(value) ?? str(obj(value)?.message))?.trim() || undefined;
}

/** The status of a run that went well; FAILURE, ERROR, CANCELLED, TIMEOUT… are failures, whatever the exit code. */
const SUCCESS = "SUCCESS";

/**
 * Reads the stream above. The answer is the result's `response`; a result that carries none (its
 * users report an empty one after tool calls) leaves the `agent_response` text after the last
 * tool step. Usage streams from the steps' own counts (each step one model call, its last count
 * kept) and is replaced by the result's totals.
 *
 * A run whose result says anything but SUCCESS failed even if agy exits 0, and so did one that
 * ended without a result: its users report both (a denied tool and an empty print mode exit 0),
 * so `failure` says why and the job fails with it instead of answering `listo` with nothing.
 */
export function agyParser(spec: JobSpec): OutputParser {
  const streamed = new BoundedText();
  let afterTool = false;
  let model = spec.model ?? undefined;
  let session: string | undefined;
  // Running usage: the steps that ended, and the last count of the step in progress.
  const done = { input: 0, output: 0, cached: 0 };
  let step: { index: unknown; tokens: ReturnType<typeof tokensOf> } | undefined;
  let usage: UsageReport | undefined;
  let result: { response: string | undefined; status: string; error: string | undefined } | undefined;

  const report = (t: { input: number; output: number; cached: number }): UsageReport => ({
    ...(model ? { model } : {}),
    inputTokens: t.input,
    outputTokens: t.output,
    cachedInputTokens: t.cached,
  });
  const stepUsage = (index: unknown, counts: Json): UsageReport => {
    if (step && step.index !== index) {
      done.input += step.tokens.input;
      done.output += step.tokens.output;
      done.cached += step.tokens.cached;
    }
    step = { index, tokens: tokensOf(counts) };
    return report({ input: done.input + step.tokens.input, output: done.output + step.tokens.output, cached: done.cached + step.tokens.cached });
  };

  const inner = jsonLinesParser({
    event(ev) {
      switch (ev.event) {
        case "init": {
          // The first id is the run's own: a subagent's steps must not replace it.
          session ??= sessionIdOf(ev.conversation_id, UUID);
          model = str(obj(ev.init)?.model) ?? model;
          return model ? { model } : undefined;
        }
        case "step_update": {
          const s = obj(ev.step_update);
          if (!s) return undefined;
          session ??= sessionIdOf(s.conversation_id, UUID);
          if (s.step_type === "tool") afterTool = true;
          else if (s.step_type === "agent_response") {
            if (afterTool) {
              streamed.reset();
              afterTool = false;
            }
            streamed.append(str(s.text_delta) ?? "");
          }
          const counts = obj(s.usage);
          if (!counts || result) return undefined;
          usage = stepUsage(s.step_index, counts);
          return usage;
        }
        case "result": {
          const r = obj(ev.result);
          if (!r) return undefined;
          session ??= sessionIdOf(r.conversation_id, UUID);
          const status = str(r.status) ?? "no status";
          const failed = status !== SUCCESS;
          result = {
            response: str(r.response),
            status,
            error: failed ? (errorText(r.error) ?? `Antigravity CLI ended its turn with status ${short(status)}`) : undefined,
          };
          const counts = obj(r.usage);
          if (counts) usage = report(tokensOf(counts));
          return counts ? usage : undefined;
        }
        default:
          return undefined;
      }
    },
    finish() {
      const answer = new BoundedText();
      if (result?.response?.trim()) answer.set(result.response);
      const finalText = answer.value() ?? streamed.value();
      return {
        ...(finalText ? { finalText } : {}),
        ...(usage ? { usage } : {}),
        ...(result?.error ? { error: result.error, failure: result.error } : {}),
        ...(session ? { sessionId: session } : {}),
      };
    },
  });
  return {
    push: (text, stream) => inner.push(text, stream),
    finish() {
      const worker = inner.finish();
      if (result) return worker;
      // No result line: agy stopped before its turn ended, or is older than 1.1.8, which refuses
      // `--output-format` (Go's "flag provided but not defined", exit 2) and prints no event.
      return {
        ...worker,
        failure:
          "Antigravity CLI ended without the result of its turn, so its answer is missing or partial: agy 1.1.8 or later prints one " +
          "(update it with agy update), and the end of its output says what it printed instead",
      };
    },
  };
}

function readStep(s: Json): ReadableEvent[] {
  switch (s.step_type) {
    case "user_input":
      return [readable.prompt(str(s.text_delta))];
    case "agent_response": {
      const text = str(s.text_delta);
      return text ? [readable.text(text, true)] : [];
    }
    case "tool": {
      const info = obj(s.tool_info);
      const name = str(s.tool_name) ?? str(info?.name) ?? "tool";
      if (s.state !== "DONE") return [readable.call(short(name), info?.parameters ?? info?.args)];
      const error = errorText(s.error) ?? errorText(info?.error);
      return [readable.result(!error, error ?? str(s.output) ?? str(info?.output))];
    }
    case "system_message": {
      const text = str(s.text_delta);
      return text ? [{ type: "note", text: short(text) }] : [];
    }
    default:
      return [];
  }
}

function readEvent(ev: Json): ReadableEvent[] {
  switch (ev.event) {
    case "init": {
      const init = obj(ev.init);
      const model = str(init?.model);
      return [{ type: "session", ...(model ? { model: short(model) } : {}), ...(Array.isArray(init?.tools) ? { tools: init.tools.length } : {}) }];
    }
    case "step_update": {
      const s = obj(ev.step_update);
      return s ? readStep(s) : [];
    }
    case "result": {
      const r = obj(ev.result);
      if (!r) return [];
      const t = tokensOf(obj(r.usage));
      const seconds = num(r.duration_seconds);
      const turns = num(r.num_turns);
      // 1.1.27 lists the tool calls its permission policy denied (`denied_actions`).
      const denied = Array.isArray(r.denied_actions) ? r.denied_actions.length : 0;
      const usage = {
        ...(obj(r.usage) ? { inputTokens: t.input, outputTokens: t.output } : {}),
        ...(seconds !== undefined ? { durationMs: Math.round(seconds * 1000) } : {}),
        extra: [
          ...(turns !== undefined ? [plural(turns, "turn")] : []),
          ...(t.thinking ? [`${plural(t.thinking, "thinking token")} in the output`] : []),
          ...(denied ? [`${plural(denied, "tool call")} denied`] : []),
        ],
      };
      if (r.status === SUCCESS) return [readable.usage("job", usage)];
      return [readable.error(errorText(r.error) ?? `ended with status ${short(str(r.status) ?? "none")}`, usage)];
    }
    default:
      return [];
  }
}

/**
 * Longer than any job may run (McpJobInputSchema's timeout_s, 7 days): agy's own `--print-timeout`
 * (5 minutes by default) must never end a job first. Since 1.1.28 it returns the partial answer,
 * exits 0 and says so on stderr only (google-antigravity/antigravity-cli#1012), which would pass
 * for a finished job; Corral's timeout ends the worker and says so instead.
 */
const PRINT_TIMEOUT_HOURS = (() => {
  const longest = McpJobInputSchema.shape.timeout_s.unwrap().maxValue;
  if (longest === null) throw new Error("agy's --print-timeout must outlast the longest job, but timeout_s has no maximum");
  return Math.ceil(longest / 3600) + 1;
})();

/**
 * `agy --print=PROMPT` in its workdir, with:
 * - `--output-format=stream-json`: the answer, tool steps and token counts as they happen;
 * - `--dangerously-skip-permissions`: as pyCorral's `gemini -y`, its tools write files without
 *   asking; print mode cannot ask, and a tool it may not use is denied while agy still exits 0
 *   (its users' reports), so a job would "succeed" with nothing written. Confine it with Corral's
 *   sandbox instead (`sandbox: bwrap`);
 * - `--add-dir=WORKDIR`: print mode without it was seen writing files under
 *   ~/.gemini/antigravity-cli/scratch instead of the launch directory (agy 1.1.22–1.1.23);
 * - `--print-timeout`, see PRINT_TIMEOUT_HOURS.
 *
 * agy parses its flags with Go's flag package: every value is glued (`--name=value`), so a prompt
 * or a model such as `--version` stays a value, and the prompt comes last (its users report a
 * prompt before other flags going unread). The `conversation_id` of a run is resumed with
 * `--conversation=<id>` (only a UUID is passed: `-c`/`--continue` would take the latest one, which
 * may be another job's). agy scopes conversations to the workspace, so a follow-up runs in the
 * earlier job's workdir.
 */
export const agy: CliAgentKind = {
  kind: "agy",
  provider: "google",
  builtins: [{ name: "agy", description: "Google Antigravity CLI (agy), Gemini CLI's successor for individual Google accounts" }],
  fields: cliFields(),
  retries: true,
  resumes: true,
  eventKey: "event",
  readEvent,
  cli: {
    defaultBinary: "agy",
    installHint:
      "install it with curl -fsSL https://antigravity.google/cli/install.sh | bash and sign in by running agy once " +
      "(it lands in ~/.local/bin: put that on the server's PATH)",
    invocation(spec, binary) {
      const model = spec.model ? [`--model=${spec.model}`] : [];
      const conversation = resumedSession(spec, UUID);
      const resume = conversation ? [`--conversation=${conversation}`] : [];
      return {
        command: binary,
        args: [
          "--output-format=stream-json",
          "--dangerously-skip-permissions",
          `--print-timeout=${PRINT_TIMEOUT_HOURS}h`,
          `--add-dir=${spec.workdir}`,
          ...model,
          ...resume,
          `--print=${spec.prompt}`,
        ],
        env: {},
        cwd: spec.workdir,
      };
    },
    createParser: agyParser,
    // Its settings, conversations, brain and logs (~/.gemini/antigravity-cli), and the
    // configuration Antigravity's products share (~/.gemini/config: MCP servers, plugins). Not
    // the rest of ~/.gemini, which is Gemini CLI's.
    stateDirs: [".gemini/antigravity-cli", ".gemini/config"],
    // Its documented switches (AGY_CLI_HIDE_ACCOUNT_INFO, AGY_CLI_DISABLE_LATEX…). It signs in
    // through the OS keyring, not a key variable its docs name.
    ownEnv: () => ["AGY_CLI_*"],
    versionArgs: ["--version"],
  },
};
