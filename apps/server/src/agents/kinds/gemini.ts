import { plural, type ReadableEvent } from "@corral/shared";
import { BoundedText, jsonLinesParser, num, obj, str } from "../json-lines.js";
import { errorMessage, readable } from "../readable.js";
import { type CliAgentKind, type Json, type JobSpec, LineSplitter, type OutputParser, type SplitLine, type UsageReport } from "../types.js";
import { resumedSession, sessionIdOf, UUID } from "../worker-session.js";
import { cliFields } from "./fields.js";

/**
 * Gemini CLI's sign-in refusal of an individual Google account (free, Google AI Pro and Ultra)
 * since 2026-06-18, as 0.49–0.59 print it on stderr (google-gemini/gemini-cli#28229, #29279):
 * "Error authenticating: IneligibleTierError: This client is no longer supported for Gemini Code
 * Assist for individuals. To continue using Gemini, please migrate to the Antigravity suite of
 * products: https://antigravity.google" (its reasonCode UNSUPPORTED_CLIENT on the next line).
 */
const INELIGIBLE = /no longer supported for Gemini Code Assist for individuals/i;

/** What a job of an ineligible account fails with: what happened, and the two ways on. */
export const INELIGIBLE_ACCOUNT =
  "Gemini CLI no longer serves individual Google accounts (free, Google AI Pro and Ultra) since 2026-06-18: " +
  "give it a Gemini API key (GEMINI_API_KEY in the server's environment or the agent's env) or a Standard/Enterprise licence " +
  "(GOOGLE_CLOUD_PROJECT), or run the agy agent (Antigravity CLI) instead; CORRAL_GEMINI_AGENT=agy makes gemini_run use it";

/**
 * Whether Gemini CLI's stderr says the account is ineligible: a plain phrase, matched line by line
 * in linear time; a line longer than 4 KiB is read in pieces, so one endless line is never held.
 */
function ineligibleWatch() {
  const lines = new LineSplitter(4096);
  let seen = false;
  const check = (parts: SplitLine[]) => {
    for (const line of parts) if (!seen && INELIGIBLE.test(line.text)) seen = true;
  };
  return {
    push: (text: string) => check(lines.push(text)),
    seen: () => {
      check(lines.end());
      return seen;
    },
  };
}

/**
 * `gemini -o stream-json`'s parser (geminiEvents), which also reads stderr for an ineligible
 * account: Gemini CLI fails at sign-in, before printing any event, and says why there only.
 */
export function geminiParser(spec: JobSpec): OutputParser {
  const events = geminiEvents(spec);
  const stderr = ineligibleWatch();
  return {
    push(text, stream) {
      if (stream === "err") stderr.push(text);
      return events.push(text, stream);
    },
    finish() {
      const result = events.finish();
      const ineligible = stderr.seen() || (result.error !== undefined && INELIGIBLE.test(result.error.slice(0, 4096)));
      return ineligible ? { ...result, error: INELIGIBLE_ACCOUNT, failure: INELIGIBLE_ACCOUNT } : result;
    },
  };
}

/**
 * `gemini -o stream-json`: the answer arrives as assistant `message` deltas, and the text after
 * the last tool call is the final one. Usage comes once, in the closing `result` line; its
 * summary leaves thought tokens out, but `total_tokens` keeps them, and they bill as output.
 */
function geminiEvents(spec: JobSpec) {
  const answer = new BoundedText();
  let afterTool = false;
  let model = spec.model ?? undefined;
  let usage: UsageReport | undefined;
  let error: string | undefined;
  let session: string | undefined;
  return jsonLinesParser({
    event(ev) {
      switch (ev.type) {
        case "init":
          session = sessionIdOf(ev.session_id, UUID) ?? session;
          model = str(ev.model) ?? model;
          return model ? { model } : undefined;
        case "tool_use":
        case "tool_result":
          afterTool = true;
          return undefined;
        case "message":
          if (ev.role !== "assistant") return undefined;
          if (afterTool) {
            answer.reset();
            afterTool = false;
          }
          answer.append(str(ev.content) ?? "");
          return undefined;
        case "error":
          error = str(obj(ev.error)?.message) ?? str(ev.message) ?? error;
          return undefined;
        case "result":
          if (ev.status !== "success") error = str(obj(ev.error)?.message) ?? error ?? `gemini ended with status ${String(ev.status)}`;
          usage = resultUsage(obj(ev.stats), model);
          return usage;
        default:
          return undefined;
      }
    },
    finish() {
      return { finalText: answer.value(), ...(usage ? { usage } : {}), ...(error ? { error } : {}), ...(session ? { sessionId: session } : {}) };
    },
  });
}

/** The job's tokens from the `result` line's stats: the Usage card and the Readable summary both count these. */
function statsTokens(stats: Json) {
  const input = num(stats.input_tokens) ?? 0;
  const output = num(stats.output_tokens) ?? 0;
  const thoughts = Math.max(0, (num(stats.total_tokens) ?? input + output) - input - output);
  return { inputTokens: input, outputTokens: output + thoughts, cachedInputTokens: num(stats.cached) ?? 0 };
}

function resultUsage(stats: Json | undefined, fallbackModel: string | undefined): UsageReport | undefined {
  if (!stats) return undefined;
  const models = Object.entries(obj(stats.models) ?? {});
  // The model that did most of the work names the job; helpers (routing, titles) are small.
  const main = models.sort(([, a], [, b]) => (num(obj(b)?.total_tokens) ?? 0) - (num(obj(a)?.total_tokens) ?? 0))[0]?.[0];
  const model = main ?? fallbackModel;
  return { ...(model ? { model } : {}), ...statsTokens(stats) };
}

function readEvent(ev: Json): ReadableEvent[] {
  switch (ev.type) {
    case "init": {
      const model = str(ev.model);
      return [{ type: "session", ...(model ? { model } : {}) }];
    }
    case "message":
      if (ev.role === "assistant") return [readable.text(str(ev.content), ev.delta === true)];
      return [readable.prompt(str(ev.content))];
    case "tool_use":
      return [readable.call(str(ev.tool_name) ?? "tool", ev.parameters)];
    case "tool_result": {
      const ok = ev.status === "success";
      return [readable.result(ok, ok ? str(ev.output) : (str(obj(ev.error)?.message) ?? str(ev.output)))];
    }
    case "error":
      return [readable.error(errorMessage(str(ev.message) ?? str(obj(ev.error)?.message)) ?? "error")];
    case "result": {
      const stats = obj(ev.stats);
      const calls = num(stats?.tool_calls);
      const tokens = stats ? statsTokens(stats) : undefined;
      const usage = {
        inputTokens: tokens?.inputTokens,
        outputTokens: tokens?.outputTokens,
        durationMs: num(stats?.duration_ms),
        extra: calls !== undefined ? [plural(calls, "tool call")] : [],
      };
      if (ev.status === "success") return [readable.usage("job", usage)];
      return [readable.error(errorMessage(str(obj(ev.error)?.message)) ?? `ended with status ${String(ev.status)}`, usage)];
    }
    default:
      return [];
  }
}

/**
 * pyCorral's `gemini -m MODEL -y -p PROMPT` (-y approves its own file writes), with
 * `-o stream-json` so the answer and token counts can be told apart from the rest. Values are
 * glued to their options (`--model=M`, `--prompt=PROMPT`): `-p --version` would print the
 * version and exit, and Gemini CLI 0.61 does not take a prompt given after `--`.
 *
 * The `init` event names the run's `session_id`; a follow-up resumes it with `--resume=<id>`.
 * Gemini CLI also reads `latest` and list indexes (`--resume=3`) there, which would resume some
 * other conversation, so only a UUID is passed. Its sessions are kept per project
 * (`~/.gemini/tmp/<project>/chats/`): a follow-up finds its session only in the same workdir.
 */
export const gemini: CliAgentKind = {
  kind: "gemini",
  provider: "google",
  builtins: [{ name: "gemini", description: "Google Gemini CLI" }],
  fields: cliFields(),
  retries: true,
  resumes: true,
  readEvent,
  cli: {
    defaultBinary: "gemini",
    // Read before the first job runs: since 2026-06-18 an individual Google account is refused at
    // sign-in, so a key (or the agy agent) is part of setting it up.
    installHint:
      "install it with npm install -g @google/gemini-cli and give it GEMINI_API_KEY (since 2026-06-18 it no longer serves individual " +
      "Google accounts: those use the agy agent, Antigravity CLI)",
    invocation(spec, binary) {
      const model = spec.model ? [`--model=${spec.model}`] : [];
      const session = resumedSession(spec, UUID);
      const resume = session ? [`--resume=${session}`] : [];
      return { command: binary, args: [...model, "-y", "-o", "stream-json", ...resume, `--prompt=${spec.prompt}`], env: {}, cwd: spec.workdir };
    },
    createParser: geminiParser,
    stateDirs: [".gemini"],
    // GEMINI_API_KEY and GEMINI_CLI_*; GOOGLE_API_KEY, GOOGLE_CLOUD_PROJECT, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_APPLICATION_CREDENTIALS…
    ownEnv: () => ["GEMINI_*", "GOOGLE_*"],
    versionArgs: ["--version"],
  },
};
