import { EventEmitter } from "node:events";
import { describe, expect, test } from "vitest";
import type { Job } from "@corral/shared";
import type { CostService } from "../../costs/service.js";
import { JobEvents } from "../../jobs/job-events.js";
import { EndedAnswers } from "./ended-answers.js";

describe("EndedAnswers", () => {
  test("keeps at most its bound, least recently used out first; a job's change or a new price lets go", () => {
    const jobs = new JobEvents();
    const costs = new EventEmitter();
    const answers = new EndedAnswers(jobs, costs as unknown as CostService, 2);
    answers.set("a", "listo a");
    answers.set("b", "listo b");
    expect(answers.get("a")).toBe("listo a");
    answers.set("c", "listo c");
    expect(answers.get("b")).toBeUndefined();
    expect(answers.get("a")).toBe("listo a");
    jobs.emit("job", { id: "a" } as Job);
    expect(answers.get("a")).toBeUndefined();
    expect(answers.get("c")).toBe("listo c");
    costs.emit("repriced");
    expect(answers.get("c")).toBeUndefined();
    answers.close();
    expect(jobs.listenerCount("job") + costs.listenerCount("repriced")).toBe(0);
  });
});
