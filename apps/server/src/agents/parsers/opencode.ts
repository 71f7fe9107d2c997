import type { JobSpec } from "../types.js";
import { BoundedText, jsonLinesParser, num, obj, str, UsageSum } from "./json-lines.js";

/**
 * `opencode run --format json`: every model step ends with `step_finish` carrying that step's
 * tokens and cost, so totals are their sum and they stream as the job runs. `input` leaves the
 * cache out and `output` leaves reasoning out; Corral's counts include them. The answer is the
 * last `text` part. The model is not in the events: it is the `-m` Corral passed.
 */
export function opencodeParser(spec: JobSpec) {
  const sum = new UsageSum();
  const answer = new BoundedText();
  const model = spec.model ?? undefined;
  let error: string | undefined;
  return jsonLinesParser({
    event(ev) {
      const part = obj(ev.part);
      if (ev.type === "text") {
        answer.set(str(part?.text) ?? "");
        return undefined;
      }
      if (ev.type === "step_finish") {
        const tokens = obj(part?.tokens);
        const cache = obj(tokens?.cache);
        const read = num(cache?.read) ?? 0;
        const write = num(cache?.write) ?? 0;
        sum.add(
          (num(tokens?.input) ?? 0) + read + write,
          (num(tokens?.output) ?? 0) + (num(tokens?.reasoning) ?? 0),
          read,
          num(part?.cost),
        );
        return sum.report(model);
      }
      if (ev.type === "error") {
        const err = obj(ev.error);
        error = str(obj(err?.data)?.message) ?? str(err?.message) ?? str(err?.name) ?? "opencode reported an error";
      }
      return undefined;
    },
    finish() {
      return { finalText: answer.value(), ...(sum.seen ? { usage: sum.report(model) } : {}), ...(error ? { error } : {}) };
    },
  });
}
