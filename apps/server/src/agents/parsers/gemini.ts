import type { JobSpec, UsageReport } from "../types.js";
import { BoundedText, jsonLinesParser, num, obj, str, type Json } from "./json-lines.js";

/**
 * `gemini -o stream-json`: the answer arrives as assistant `message` deltas, and the text after
 * the last tool call is the final one. Usage comes once, in the closing `result` line; its
 * summary leaves thought tokens out, but `total_tokens` keeps them, and they bill as output.
 */
export function geminiParser(spec: JobSpec) {
  const answer = new BoundedText();
  let afterTool = false;
  let model = spec.model ?? undefined;
  let usage: UsageReport | undefined;
  let error: string | undefined;
  return jsonLinesParser({
    event(ev) {
      switch (ev.type) {
        case "init":
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
      return { finalText: answer.value(), ...(usage ? { usage } : {}), ...(error ? { error } : {}) };
    },
  });
}

function resultUsage(stats: Json | undefined, fallbackModel: string | undefined): UsageReport | undefined {
  if (!stats) return undefined;
  const input = num(stats.input_tokens) ?? 0;
  const output = num(stats.output_tokens) ?? 0;
  const thoughts = Math.max(0, (num(stats.total_tokens) ?? input + output) - input - output);
  const models = Object.entries(obj(stats.models) ?? {});
  // The model that did most of the work names the job; helpers (routing, titles) are small.
  const main = models.sort(([, a], [, b]) => (num(obj(b)?.total_tokens) ?? 0) - (num(obj(a)?.total_tokens) ?? 0))[0]?.[0];
  const model = main ?? fallbackModel;
  return {
    ...(model ? { model } : {}),
    inputTokens: input,
    outputTokens: output + thoughts,
    cachedInputTokens: num(stats.cached) ?? 0,
  };
}
