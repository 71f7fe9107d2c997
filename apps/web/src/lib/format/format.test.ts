import { describe, expect, it } from "vitest";
import { formatDuration, shellQuote, usageCost } from "./format.js";
import { permissionsSnippet, mcpAddCommand, mcpUrlWith } from "../domain/connect-snippets.js";
import { mergeJobFiles } from "../domain/job-files.js";

describe("format", () => {
  it("never shows an unknown cost as free", () => {
    const u = (costUsd: number | null, costSource: "reported" | "estimated" | null, inputTokens: number | null = 100) => ({
      costUsd,
      costSource,
      inputTokens,
      outputTokens: inputTokens === null ? null : 5,
    });
    expect(usageCost(u(null, null))).toBe("unpriced");
    expect(usageCost(u(null, null, null))).toBe("—");
    expect(usageCost(u(null, null, null), "not reported by this worker")).toBe("not reported by this worker");
    // What a running OpenCode job streams for a model it has no price for.
    expect(usageCost(u(0, "reported"))).toBe("unpriced");
    expect(usageCost(u(0, "estimated"))).toBe("$0");
    expect(usageCost(u(0.0042, "reported"))).toBe("$0.0042");
    expect(usageCost(u(0.0134, "estimated"))).toBe("$0.013");
    expect(usageCost(u(1.5, "reported"))).toBe("$1.50");
  });

  it("formats durations", () => {
    expect(formatDuration(5_000)).toBe("5s");
    expect(formatDuration(65_000)).toBe("1m 05s");
    expect(formatDuration(3_660_000)).toBe("1h 01m");
  });

  it("quotes arguments so the command pastes into a shell as it ran", () => {
    expect(shellQuote("--json")).toBe("--json");
    expect(shellQuote("it's here")).toBe(`'it'\\''s here'`);
    expect(shellQuote("a\n\u001b[31mb")).toBe("$'a\\n\\x1b[31mb'");
  });
});

describe("connect snippets", () => {
  it("builds the claude mcp add command and the permission rules", () => {
    expect(mcpAddCommand("corral", "http://127.0.0.1:7433/mcp", "tok")).toBe(
      "claude mcp add --transport http corral http://127.0.0.1:7433/mcp --header 'Authorization: Bearer tok'",
    );
    expect(JSON.parse(permissionsSnippet(["gemini"]))).toEqual({ permissions: { allow: ["mcp__corral__*", "mcp__gemini__*"] } });
  });

  it("adds the picked toolsets and options to /mcp, quoted for the shell", () => {
    const base = "http://127.0.0.1:7433/mcp";
    expect(mcpUrlWith(base, [], false)).toBe(base);
    expect(mcpUrlWith(base, ["hub", "costs"], false)).toBe(`${base}?toolsets=hub,costs`);
    expect(mcpUrlWith(base, ["hub"], true)).toBe(`${base}?toolsets=hub&options=all`);
    expect(mcpAddCommand("corral", mcpUrlWith(base, [], true), "tok")).toBe(
      `claude mcp add --transport http corral '${base}?options=all' --header 'Authorization: Bearer tok'`,
    );
    // Whatever Host the panel was reached by, nothing in it runs.
    expect(mcpAddCommand("corral", "http://h/$(id)/mcp", "t")).toContain("'http://h/$(id)/mcp'");
    expect(mcpAddCommand("corral", "http://[::1]:7433/mcp", "t")).toContain("'http://[::1]:7433/mcp'");
  });
});

describe("job files", () => {
  it("keeps the latest change of each path", () => {
    const merged = mergeJobFiles(
      [{ path: "b.txt", change: "created", size: 1, at: 1 }],
      [
        { path: "b.txt", change: "modified", size: 2, at: 2 },
        { path: "a.txt", change: "created", size: 3, at: 3 },
      ],
    );
    expect(merged.map((f) => `${f.path}:${f.change}`)).toEqual(["a.txt:created", "b.txt:modified"]);
  });
});
