import type { JobSpec } from "../types.js";
import { jsonLinesParser, num, obj, str, UsageSum } from "./json-lines.js";

/**
 * `codex exec --json`: the answer is the last completed `agent_message` item; `turn.completed`
 * has the turn's tokens (input includes cached, output includes reasoning). There is no cost
 * and no model in the events: the model is the one Corral passed, and the price table prices it.
 */
export function codexParser(spec: JobSpec) {
  const sum = new UsageSum();
  const model = spec.model ?? undefined;
  let answer: string | undefined;
  let error: string | undefined;
  return jsonLinesParser({
    event(ev) {
      if (ev.type === "item.completed") {
        const item = obj(ev.item);
        if (item?.type === "agent_message") answer = str(item.text) ?? answer;
        return undefined;
      }
      if (ev.type === "turn.completed") {
        const usage = obj(ev.usage);
        sum.add(num(usage?.input_tokens) ?? 0, num(usage?.output_tokens) ?? 0, num(usage?.cached_input_tokens) ?? 0);
        return sum.report(model);
      }
      if (ev.type === "turn.failed") error = str(obj(ev.error)?.message) ?? error ?? "codex turn failed";
      else if (ev.type === "error") error = str(ev.message) ?? error;
      return undefined;
    },
    finish() {
      const text = answer?.trim();
      return { finalText: text || undefined, ...(sum.seen ? { usage: sum.report(model) } : {}), ...(error ? { error } : {}) };
    },
  });
}
