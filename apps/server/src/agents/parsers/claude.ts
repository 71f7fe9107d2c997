import type { JobSpec, UsageReport } from "../types.js";
import { BoundedText, jsonLinesParser, num, obj, str, UsageSum, type Json } from "./json-lines.js";

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
  return jsonLinesParser({
    event(ev) {
      if (ev.type === "system" && ev.subtype === "init") {
        model = str(ev.model) ?? model;
        return model ? { model } : undefined;
      }
      if (ev.type === "assistant") {
        const message = obj(ev.message);
        model = str(message?.model) ?? model;
        const blocks = Array.isArray(message?.content) ? message.content : [];
        const texts = blocks.map(obj).filter((b) => b?.type === "text").map((b) => str(b?.text) ?? "");
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
        result = { text, usage, ...(ev.is_error === true ? { error: text ?? `claude reported an error (${String(ev.subtype)})` } : {}) };
        return usage;
      }
      return undefined;
    },
    finish() {
      if (result) return { finalText: result.text?.trim() || undefined, usage: result.usage, ...(result.error ? { error: result.error } : {}) };
      return { finalText: lastText.value(), ...(running.seen ? { usage: running.report(model) } : {}) };
    },
  });
}
