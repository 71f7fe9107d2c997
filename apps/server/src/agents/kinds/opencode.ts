import type { ReadableEvent } from "@corral/shared";
import { BoundedText, jsonLinesParser, num, obj, str, UsageSum } from "../json-lines.js";
import { readable } from "../readable.js";
import type { CliAgentKind, Json, JobSpec } from "../types.js";
import { OPENCODE_SESSION, resumedSession, sessionIdOf } from "../worker-session.js";
import { cliFields } from "./fields.js";

/**
 * `opencode run --format json`: every model step ends with `step_finish` carrying that step's
 * tokens and cost, so totals are their sum and they stream as the job runs. `input` leaves the
 * cache out and `output` leaves reasoning out; Corral's counts include them. The answer is the
 * last `text` part. The model is not in the events: it is the `-m` Corral passed.
 */
/** A step's tokens and cost: the Usage card (their sum) and the Readable step lines both count these. */
export function stepTokens(part: Json | undefined) {
  const tokens = obj(part?.tokens);
  const cache = obj(tokens?.cache);
  const read = num(cache?.read) ?? 0;
  return {
    input: (num(tokens?.input) ?? 0) + read + (num(cache?.write) ?? 0),
    output: (num(tokens?.output) ?? 0) + (num(tokens?.reasoning) ?? 0),
    cached: read,
    cost: num(part?.cost),
  };
}

export function opencodeParser(spec: JobSpec) {
  const sum = new UsageSum();
  const answer = new BoundedText();
  const model = spec.model ?? undefined;
  let error: string | undefined;
  let session: string | undefined;
  return jsonLinesParser({
    event(ev) {
      // The first id is the run's own: a subagent's child session must not replace it.
      session ??= sessionIdOf(ev.sessionID, OPENCODE_SESSION);
      const part = obj(ev.part);
      if (ev.type === "text") {
        answer.set(str(part?.text) ?? "");
        return undefined;
      }
      if (ev.type === "step_finish") {
        const t = stepTokens(part);
        sum.add(t.input, t.output, t.cached, t.cost);
        return sum.report(model);
      }
      if (ev.type === "error") {
        const err = obj(ev.error);
        error = str(obj(err?.data)?.message) ?? str(err?.message) ?? str(err?.name) ?? "opencode reported an error";
      }
      return undefined;
    },
    finish() {
      return {
        finalText: answer.value(),
        ...(sum.seen ? { usage: sum.report(model) } : {}),
        ...(error ? { error } : {}),
        ...(session ? { sessionId: session } : {}),
      };
    },
  });
}

export function readEvent(ev: Json): ReadableEvent[] {
  const part = obj(ev.part);
  switch (ev.type) {
    case "text":
      return [readable.text(str(part?.text))];
    case "reasoning":
      return [readable.thinking(str(part?.text))];
    case "tool_use": {
      const state = obj(part?.state);
      const call = readable.call(str(part?.tool) ?? "tool", state?.input);
      if (state?.status === "completed") return [call, readable.result(true, str(state.output))];
      if (state?.status === "error") return [call, readable.result(false, str(state.error))];
      return [call];
    }
    case "step_finish": {
      const t = stepTokens(part);
      return [readable.usage("step", { inputTokens: t.input, outputTokens: t.output, costUsd: t.cost })];
    }
    case "error": {
      const err = obj(ev.error);
      return [readable.error(str(obj(err?.data)?.message) ?? str(err?.message) ?? str(err?.name) ?? "error")];
    }
    default:
      return [];
  }
}

/** Providers whose variables are not named after the provider's id. */
const PROVIDER_ENV = new Map([
  ["amazon", ["AWS_*"]],
  ["google", ["GOOGLE_*", "GEMINI_API_KEY"]],
]);

/**
 * The variables of the provider a model names (`anthropic/claude-…`: ANTHROPIC_*), as OpenCode's
 * providers read them (`<PROVIDER>_API_KEY`; `fireworks-ai`: FIREWORKS_*); other providers' keys stay out.
 */
export function providerEnv(model: string | null): string[] {
  const word = /^([a-z][a-z0-9]+)(?:[-_][^/]*)?\//.exec(model ?? "")?.[1];
  if (!word) return [];
  return PROVIDER_ENV.get(word) ?? [`${word.toUpperCase()}_*`];
}

/**
 * pyCorral's `opencode --log-level ERROR -m MODEL run PROMPT`, with `--format json` for the
 * answer, tokens and cost; the answer alone (not the events) lands in output.md. The prompt is
 * `run`'s `message` positional given in its option form, glued (`--message=PROMPT`), so a prompt
 * such as `--version` reaches the model. Not `-- PROMPT`: OpenCode 1.18 turns a number-like
 * prompt after `--` (`42`, `1e3`) into a number and crashes on it.
 *
 * Every event carries the run's `sessionID`; a follow-up continues it with `run --session=<id>`,
 * which exits with "Session not found" rather than starting afresh when the id is unknown.
 */
export const opencode: CliAgentKind = {
  kind: "opencode",
  provider: "opencode",
  builtins: [{ name: "opencode", description: "OpenCode CLI; its answer is also written to output.md" }],
  fields: cliFields(),
  retries: true,
  resumes: true,
  readEvent,
  cli: {
    defaultBinary: "opencode",
    installHint: "install it with npm install -g opencode-ai",
    invocation(spec, binary) {
      const model = spec.model ? [`--model=${spec.model}`] : [];
      const session = resumedSession(spec, OPENCODE_SESSION);
      const resume = session ? [`--session=${session}`] : [];
      return {
        command: binary,
        args: ["--log-level", "ERROR", ...model, "run", "--format", "json", ...resume, `--message=${spec.prompt}`],
        env: {},
        cwd: spec.workdir,
      };
    },
    createParser: opencodeParser,
    finalTextFile: "output.md",
    stateDirs: [".local/share/opencode", ".config/opencode", ".cache/opencode", ".local/state/opencode"],
    ownEnv: (model) => ["OPENCODE_*", ...providerEnv(model)],
    versionArgs: ["--version"],
  },
};
