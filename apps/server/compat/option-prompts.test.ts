// Prompts that look like command-line options, run as Corral jobs by the real pinned CLIs (Claude
// Code 2.1.197, Gemini CLI 0.61.0, OpenCode 1.18.33, Codex 0.171.0): each must reach the fake LLM
// as the user's message. Had Corral put the prompt where the CLI parses options, `--version`
// would print the version and exit 0 without asking any model, and `help` would be a codex
// subcommand.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../test/fixtures/fake-llm/anthropic.js";
import { startFakeGemini } from "../test/fixtures/fake-llm/gemini.js";
import { startFakeOpenAI } from "../test/fixtures/fake-llm/openai.js";
import { isRecord, type FakeServer, type RecordedRequest, type Script } from "../test/fixtures/fake-llm/script.js";
import { configureAgent, pointOpencodeAt, runJob, workerSuite } from "./lib/jobs.js";

const suite = workerSuite(["claude", "gemini", "opencode", "codex"]);
const script: Script = [{ kind: "text", text: "Done", usage: { input: 10, output: 2 } }];

/** Every text the requests carry in a user turn (Anthropic, Gemini, Chat Completions and Responses shapes). */
function userTexts(requests: RecordedRequest[]): string[] {
  const texts: string[] = [];
  const walk = (value: unknown, role: unknown): void => {
    if (Array.isArray(value)) {
      for (const v of value) walk(v, role);
      return;
    }
    if (!isRecord(value)) return;
    const own = value.role ?? role;
    if (own === "user" && typeof value.text === "string") texts.push(value.text);
    if (own === "user" && typeof value.content === "string") texts.push(value.content);
    for (const key of ["messages", "contents", "input", "content", "parts"]) if (typeof value[key] !== "string") walk(value[key], own);
  };
  for (const request of requests) walk(request.body, undefined);
  return texts;
}

async function fake(start: (script: Script) => Promise<FakeServer>): Promise<FakeServer> {
  const started = await start(script);
  suite.track(started);
  return started;
}

/** Each CLI pointed at its fake, the way users point them at a provider: the agent's environment. */
const setups: Record<string, () => Promise<{ fake: FakeServer; model?: string }>> = {
  async claude() {
    const f = await fake(startFakeAnthropic);
    await configureAgent(suite.server, "claude", {
      ANTHROPIC_BASE_URL: f.url,
      ANTHROPIC_API_KEY: "fake",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
    });
    return { fake: f, model: "claude-sonnet-4-5" };
  },
  async gemini() {
    const f = await fake(startFakeGemini);
    await configureAgent(suite.server, "gemini", { GOOGLE_GEMINI_BASE_URL: f.url, GEMINI_API_KEY: "fake", GEMINI_CLI_TRUST_WORKSPACE: "true" });
    return { fake: f };
  },
  async opencode() {
    const f = await fake(startFakeOpenAI);
    return { fake: f, model: await pointOpencodeAt(suite.server, f.url) };
  },
  async codex() {
    const f = await fake(startFakeOpenAI);
    const home = path.join(suite.server.root, ".codex-home");
    mkdirSync(home, { recursive: true });
    // A model slug Codex knows, as in the captured samples.
    writeFileSync(
      path.join(home, "config.toml"),
      [
        'model = "gpt-5.5"',
        'model_provider = "fake"',
        'approval_policy = "never"',
        "[model_providers.fake]",
        'name = "Fake"',
        `base_url = "${f.url}/v1"`,
        'env_key = "FAKE_API_KEY"',
        'wire_api = "responses"',
        "",
      ].join("\n"),
    );
    await configureAgent(suite.server, "codex", { CODEX_HOME: home, FAKE_API_KEY: "fake" });
    return { fake: f };
  },
};

/**
 * What each CLI is sent. OpenCode also gets a number-like prompt: it turns one given after `--`
 * into a number and crashes, which is why Corral glues its prompt to `--message=`.
 */
const cases: [agent: string, prompts: string[]][] = [
  ["claude", ["--version", "-h"]],
  ["gemini", ["--version", "-h"]],
  ["opencode", ["--version", "42"]],
  ["codex", ["--version", "help"]],
];

describe("prompts that look like options reach the model", () => {
  it.each(cases)("%s", async (agent, prompts) => {
    const { fake: f, model } = await setups[agent]!();
    for (const prompt of prompts) {
      const before = f.requests.length;
      const { job, output } = await runJob(suite.server, agent, {
        prompt,
        workdir: path.join(suite.server.root, "jobs", agent),
        ...(model ? { model } : {}),
      });
      expect(job.status, `${job.error ?? ""}\n${output}`).toBe("succeeded");
      expect(userTexts(f.requests.slice(before)), output).toContain(prompt);
      expect(job.finalText).toBe("Done");
    }
  });
});
