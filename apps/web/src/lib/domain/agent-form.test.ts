import { describe, expect, it } from "vitest";
import { createCommandBody, newCommandAgentForm } from "./agent-form.js";
import { chartRows, daysOf } from "../../api/costs.js";
import { ApiRequestError } from "../../api/client.js";

describe("forms", () => {
  it("builds a command agent from the form", () => {
    const form = { ...newCommandAgentForm(), name: "echoer", command: "echo", args: "{prompt}\n--flag", env: "A=1" };
    expect(createCommandBody(form)).toEqual({
      body: { name: "echoer", kind: "command", command: "echo", args: ["{prompt}", "--flag"], env: { A: "1" }, description: "" },
    });
    expect(createCommandBody({ ...form, env: "nope" })).toMatchObject({ field: "env" });
  });

  it("finds the server's message for a field", () => {
    const err = new ApiRequestError("invalid input", 400, "workdir", [{ field: "workdir", message: "outside the roots" }]);
    expect(err.messageFor("workdir")).toBe("outside the roots");
    expect(err.messageFor("prompt")).toBeUndefined();
  });
});

describe("cost chart", () => {
  it("has a row for every day, quiet ones included", () => {
    expect(daysOf({ from: "2026-01-30", to: "2026-02-02" })).toEqual(["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"]);
    const totals = {
      jobs: 1,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      reportedUsd: 0,
      estimatedUsd: 0,
      pricedJobs: 1,
      unpricedJobs: 0,
      unpricedInputTokens: 0,
      unpricedOutputTokens: 0,
      noUsageJobs: 0,
    };
    const { rows, providers } = chartRows(
      {
        from: 0,
        to: 0,
        groupBy: ["day", "provider"],
        totals: { ...totals, costUsd: 3 },
        groups: [
          { ...totals, costUsd: 2, day: "2026-02-01", provider: "google" },
          { ...totals, costUsd: 1, day: "2026-02-01", provider: "anthropic" },
        ],
      },
      { from: "2026-01-31", to: "2026-02-01" },
    );
    expect(providers).toEqual(["anthropic", "google"]);
    expect(rows).toEqual([{ day: "2026-01-31" }, { day: "2026-02-01", google: 2, anthropic: 1 }]);
  });
});
