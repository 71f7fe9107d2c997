import { chmodSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { AgentWithAvailability } from "@corral/shared";
import { versionFromOutput } from "../src/agents/cli-version.js";
import { api, startServer, type TestServer } from "./helpers.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const listed = async () => {
  const { status, body } = await api<{ agents: AgentWithAvailability[] }>(server, "GET", "/api/agents");
  expect(status).toBe(200);
  return new Map(body.agents.map((a) => [a.name, a.availability]));
};

/** A stand-in CLI that counts how often it is run, then behaves as `body` says. */
function script(name: string, body: string): { file: string; runs: () => number } {
  const file = path.join(server.root, name);
  const counter = `${file}.runs`;
  writeFileSync(counter, "");
  writeFileSync(file, `#!/bin/sh\necho run >> '${counter}'\n${body}\n`);
  chmodSync(file, 0o755);
  return { file, runs: () => readFileSync(counter, "utf8").split("\n").filter(Boolean).length };
}

describe("agent versions", () => {
  test("GET /api/agents shows what each available CLI answers to --version", async () => {
    const agents = await listed();
    expect(agents.get("gemini")).toMatchObject({ available: true, version: "gemini 9.9.9-fake" });
    expect(agents.get("claude")?.version).toBe("claude 9.9.9-fake");
    expect(agents.get("opencode")?.version).toBe("opencode 9.9.9-fake");
    expect(agents.get("codex")?.version).toBe("codex 9.9.9-fake");
    expect(agents.get("kiro")?.version).toBe("kiro-cli-chat 9.9.9-fake");
    // The Ollama agents have no server here; they are unavailable and have no version.
    expect(agents.get("ollama")).toMatchObject({ available: false, version: null });
  });

  test("a CLI is asked once per binary and again after it changes on disk", async () => {
    const cli = script("versioned-cli", "echo 'Checking for updates...'\necho '2.1.197 (Claude Code)'");
    expect((await api(server, "POST", "/api/agents", { name: "versioned", kind: "claude", command: cli.file })).status).toBe(201);
    expect((await listed()).get("versioned")).toMatchObject({ available: true, resolved: cli.file, version: "2.1.197 (Claude Code)" });
    await listed();
    expect(cli.runs()).toBe(1);
    // An upgrade in place: same path, new modification time.
    writeFileSync(cli.file, readFileSync(cli.file, "utf8").replace("2.1.197", "2.2.0"));
    utimesSync(cli.file, new Date(), new Date(Date.now() + 5_000));
    expect((await listed()).get("versioned")?.version).toBe("2.2.0 (Claude Code)");
    expect(cli.runs()).toBe(2);
  });

  test("a CLI that hangs or prints no version is still listed as available, with no version", async () => {
    const hangs = script("hanging-cli", "exec sleep 60");
    const silent = script("silent-cli", "echo 'usage: silent [options]'\nexit 2");
    await api(server, "POST", "/api/agents", { name: "hangs", kind: "gemini", command: hangs.file });
    await api(server, "POST", "/api/agents", { name: "silent", kind: "codex", command: silent.file });
    const agents = await listed();
    expect(agents.get("hangs")).toMatchObject({ available: true, version: null });
    expect(agents.get("silent")).toMatchObject({ available: true, version: null });
    expect(agents.get("gemini")?.version).toBe("gemini 9.9.9-fake");
    // The timeout is remembered for a while, so later listings do not wait for it again.
    await listed();
    expect(hangs.runs()).toBe(1);
  });

  test("the built-in copilot agent is an ACP agent: its install hint until it is on PATH, then its version", async () => {
    const empty = path.join(server.root, "no-copilot");
    mkdirSync(empty, { recursive: true });
    const patched = await api(server, "PATCH", "/api/agents/copilot", { env: { PATH: empty } });
    expect(patched.body).toMatchObject({ kind: "acp", command: "copilot", builtin: true, provider: "github" });
    const missing = (await listed()).get("copilot");
    expect(missing).toMatchObject({ available: false, version: null });
    expect(missing?.hint).toBe(
      "copilot was not found on PATH; install it with npm install -g @github/copilot and sign in once (run copilot, then /login), or set GH_TOKEN or COPILOT_GITHUB_TOKEN in the server's environment, or set the agent's command to its absolute path",
    );
    mkdirSync(path.join(server.root, "copilot-bin"), { recursive: true });
    const copilot = script("copilot-bin/copilot", "echo 'GitHub Copilot CLI 1.0.7.'");
    await api(server, "PATCH", "/api/agents/copilot", { command: copilot.file });
    expect((await listed()).get("copilot")).toMatchObject({ available: true, version: "GitHub Copilot CLI 1.0.7." });
    // Found only through the agent's own PATH (a folder its workers may write): listed, never run.
    await api(server, "PATCH", "/api/agents/copilot", { command: "copilot", env: { PATH: path.dirname(copilot.file) } });
    expect((await listed()).get("copilot")).toMatchObject({ available: true, resolved: copilot.file, version: null });
    expect(copilot.runs()).toBe(1);
    // An ACP adapter Corral knows but that would start serving if asked is not run.
    const adapter = script("copilot-bin/claude-agent-acp", "echo 'v0.1.0'");
    await api(server, "POST", "/api/agents", { name: "claude_acp", kind: "acp", command: adapter.file });
    expect((await listed()).get("claude_acp")).toMatchObject({ available: true, version: null });
    expect(adapter.runs()).toBe(0);
  });

  test("command agents are never run just to ask their version", async () => {
    const tool = script("some-tool", "echo 'v1.2.3'");
    await api(server, "POST", "/api/agents", { name: "tool", kind: "command", command: tool.file, args: ["{prompt}"] });
    expect((await listed()).get("tool")).toMatchObject({ available: true, version: null });
    expect(tool.runs()).toBe(0);
  });
});

test("the version is the first line that looks like one, without colour codes, bounded", () => {
  expect(versionFromOutput("codex-cli 0.171.0\n")).toBe("codex-cli 0.171.0");
  expect(versionFromOutput("\u001b[1mWelcome\u001b[0m\n\u001b[32m1.18.33\u001b[0m\n")).toBe("1.18.33");
  expect(versionFromOutput("no version here\n")).toBeNull();
  expect(versionFromOutput(`v1.0 ${"x".repeat(500)}`)?.length).toBe(100);
});
