import { describe, expect, it } from "vitest";
import { type ProbeAllRun, probeAllText, probeEach } from "./probe-all.js";

/** A probe that answers when the test says so, recording what was asked and how many were asked at once. */
function controlledProbe() {
  const asked: string[] = [];
  const pending: { model: string; answer: () => void; fail: (err: Error) => void }[] = [];
  let atOnce = 0;
  let mostAtOnce = 0;
  const probe = (model: string, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      asked.push(model);
      atOnce++;
      mostAtOnce = Math.max(mostAtOnce, atOnce);
      const settle = (fn: () => void) => () => {
        atOnce--;
        fn();
      };
      pending.push({ model, answer: settle(resolve), fail: (err) => settle(() => reject(err))() });
      signal.addEventListener(
        "abort",
        settle(() => reject(new DOMException("aborted", "AbortError"))),
        { once: true },
      );
    });
  const next = async () => {
    await until(() => pending.length > 0);
    return pending.shift() as (typeof pending)[number];
  };
  return { probe, asked, next, mostAtOnce: () => mostAtOnce };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 0));
};

describe("probeEach", () => {
  it("asks one model at a time, in order, and reports each step as it comes", async () => {
    const { probe, asked, next, mostAtOnce } = controlledProbe();
    const seen: ProbeAllRun[] = [];
    const done = probeEach(["a", "b", "c"], probe, new AbortController().signal, (run) => seen.push(run));
    (await next()).answer();
    await until(() => seen.at(-1)?.current === "b");
    expect(probeAllText(seen.at(-1) as ProbeAllRun)).toBe("Probing 2 of 3: b…");
    expect(seen.at(-1)?.done).toBe(1);
    (await next()).fail(new Error("Ollama is not reachable"));
    (await next()).answer();
    const end = await done;
    expect(asked).toEqual(["a", "b", "c"]);
    expect(mostAtOnce()).toBe(1);
    // A failed request is noted and the next model is asked.
    expect(end).toMatchObject({ state: "finished", done: 3, current: null, failed: { b: "Ollama is not reachable" } });
    expect(probeAllText(end)).toBe("Probed 3 models (1 could not be asked)");
  });

  it("asks nothing more once stopped, and says where it stopped", async () => {
    const { probe, asked, next } = controlledProbe();
    const stop = new AbortController();
    let last: ProbeAllRun | null = null;
    const done = probeEach(["a", "b", "c"], probe, stop.signal, (run) => (last = run));
    (await next()).answer();
    await until(() => asked.length === 2);
    stop.abort();
    const end = await done;
    expect(asked).toEqual(["a", "b"]);
    // The question being asked when Stop came is not a failure.
    expect(end).toMatchObject({ state: "stopped", done: 1, failed: {} });
    expect(last).toEqual(end);
    expect(probeAllText(end)).toBe("Stopped after 1 of 3");
  });

  it("finishes at once with nothing to probe", async () => {
    const { probe, asked } = controlledProbe();
    const end = await probeEach([], probe, new AbortController().signal, () => {});
    expect(asked).toEqual([]);
    expect(probeAllText(end)).toBe("Probed 0 models");
  });
});
