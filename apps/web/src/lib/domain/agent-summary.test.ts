import { describe, expect, it } from "vitest";
import { agentLimits } from "./agent-summary.js";

describe("an agent's row on the Agents page", () => {
  it("names its limits, and its worktree default when its jobs run in a worktree of their own", () => {
    const agent = { timeoutS: 600, maxConcurrent: 4, provider: "google", worktree: false };
    expect(agentLimits(agent)).toBe("timeout 600s · 4 at once · google");
    expect(agentLimits({ ...agent, worktree: true })).toBe("timeout 600s · 4 at once · google · a worktree per job");
  });
});
