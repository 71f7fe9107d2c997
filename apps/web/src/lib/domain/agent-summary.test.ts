import { describe, expect, it } from "vitest";
import { agentLimits } from "./agent-summary.js";

describe("an agent's row on the Agents page", () => {
  it("names its limits, and its worktree default when its jobs run in a worktree of their own", () => {
    const agent = { timeoutS: 600, maxConcurrent: 4, provider: "google", worktree: false, sessions: [] };
    expect(agentLimits(agent)).toBe("timeout 600s · 4 at once · google");
    expect(agentLimits({ ...agent, worktree: true })).toBe("timeout 600s · 4 at once · google · a worktree per job");
  });

  it("names the hub sessions it is limited to, and none when it is in every session", () => {
    const agent = { timeoutS: 600, maxConcurrent: 4, provider: "google", worktree: false, sessions: ["review"] };
    expect(agentLimits(agent)).toBe("timeout 600s · 4 at once · google · hub session review");
    expect(agentLimits({ ...agent, sessions: ["review", "build-42"] })).toBe("timeout 600s · 4 at once · google · hub sessions review, build-42");
  });
});
