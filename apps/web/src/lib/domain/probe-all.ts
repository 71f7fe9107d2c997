/**
 * Probing every listed model: one at a time (an Ollama server loads one model to answer, and a
 * second question at once only waits behind the first), each through the same probe as its row's
 * button. Pure of React, so the order, the progress and the stop are tested without a page.
 */
import { plural } from "../format/format.js";

/** Where a run of probes is: the models it asks about, how many are done, the one being asked, and those whose request failed. */
export interface ProbeAllRun {
  models: string[];
  done: number;
  current: string | null;
  /** A model's probe request that failed (not an outcome: the server did not answer), by model. */
  failed: Record<string, string>;
  state: "running" | "finished" | "stopped";
}

export const startedRun = (models: string[]): ProbeAllRun => ({ models, done: 0, current: models[0] ?? null, failed: {}, state: "running" });

/**
 * Asks `probe` about each model in turn, reporting each step through `update` as it happens.
 * A failed request is noted and the next model is asked; once `signal` aborts, nothing more is asked.
 */
export async function probeEach(
  models: string[],
  probe: (model: string, signal: AbortSignal) => Promise<unknown>,
  signal: AbortSignal,
  update: (run: ProbeAllRun) => void,
): Promise<ProbeAllRun> {
  let run = startedRun(models);
  update(run);
  for (const [i, model] of models.entries()) {
    if (signal.aborted) break;
    run = { ...run, current: model };
    update(run);
    try {
      await probe(model, signal);
    } catch (err) {
      if (signal.aborted) break;
      run = { ...run, failed: { ...run.failed, [model]: err instanceof Error ? err.message : String(err) } };
    }
    run = { ...run, done: i + 1 };
    update(run);
  }
  run = { ...run, current: null, state: signal.aborted ? "stopped" : "finished" };
  update(run);
  return run;
}

/** What the page says of a run: "Probing 2 of 4: llava:13b…", "Probed 4 models", "Stopped after 1 of 4". */
export function probeAllText(run: ProbeAllRun): string {
  const total = run.models.length;
  const failed = Object.keys(run.failed).length;
  const failures = failed ? ` (${failed} could not be asked)` : "";
  if (run.state === "running") return `Probing ${Math.min(run.done + 1, total)} of ${total}${run.current ? `: ${run.current}` : ""}…`;
  if (run.state === "stopped") return `Stopped after ${run.done} of ${total}${failures}`;
  return `Probed ${plural(total, "model")}${failures}`;
}
