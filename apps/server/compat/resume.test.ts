// Follow-ups through each pinned CLI's own resume mechanism (Claude Code 2.1.197, Gemini CLI 0.61.0,
// OpenCode 1.18.33, Codex 0.171.0): a first run, then a second one invoked exactly as the adapter
// builds a follow-up from the session id its parser read. The second run's model request must carry
// the first turn (its prompt and its answer) before the new prompt, and the follow-up keeps the
// first run's permissions: its model writes a file with the CLI's own write tool.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { newAgentRow } from "../src/agents/catalog.js";
import { cliAdapterFor } from "../src/agents/kind-lookup.js";
import type { CliAdapter, FollowUp, JobSpec, WorkerResult } from "../src/agents/types.js";
import type { AgentRow } from "../src/db/schema.js";
import { startFakeAnthropic } from "../test/fixtures/fake-llm/anthropic.js";
import { startFakeGemini } from "../test/fixtures/fake-llm/gemini.js";
import { startFakeOpenAI } from "../test/fixtures/fake-llm/openai.js";
import type { FakeServer, Script } from "../test/fixtures/fake-llm/script.js";
import { conversation, find, mainRequests } from "./lib/conversation.js";
import { opencodeConfig } from "./lib/jobs.js";
import { type Client, claudeEnv, cleanEnv, clientBin, describeRun, prepareWorkerHome, runClient } from "./lib/clients.js";

const FIRST = "Remember the code word PELICAN-7.";
const ANSWER = "Noted: the code word is PELICAN-7.";
const SECOND = "Write the code word into followup.txt.";

/** `CORRAL_RESUME_SAMPLES=<dir>` keeps the follow-ups' output there, named as in test/fixtures/samples. */
const samplesDir = process.env.CORRAL_RESUME_SAMPLES;
const sampleNames: Record<string, [cli: string, mode: string, ext: string]> = {
  claude: ["claude-2.1.197", "stream-json", "ndjson"],
  gemini: ["gemini-0.61.0", "stream-json", "ndjson"],
  opencode: ["opencode-1.18.33", "format-json", "ndjson"],
  codex: ["codex-0.171.0", "exec-json", "ndjson"],
};

function keepSample(kind: string, variant: "resume" | "resume-unknown", run: { stdout: string; stderr: string }): void {
  if (!samplesDir) return;
  const [cli, mode, ext] = sampleNames[kind]!;
  const base = path.join(samplesDir, `${cli}-${variant}-${mode}`);
  if (run.stdout) writeFileSync(`${base}.${ext}`, run.stdout);
  if (run.stderr) writeFileSync(`${base}.stderr.txt`, run.stderr);
}

const fakes: FakeServer[] = [];
const roots: string[] = [];
afterAll(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

interface Setup {
  start(script: Script): Promise<FakeServer>;
  /** The run's environment with its API pointed at `url` (and any config file written for it). */
  env(home: string, url: string): Record<string, string>;
  model: string | null;
  /** The CLI's own write tool, writing `followup.txt` in the workdir. */
  write(workdir: string): { name: string; args: Record<string, unknown> };
}

const setups: Record<string, Setup> = {
  claude: {
    start: startFakeAnthropic,
    env: (home, url) => claudeEnv(home, url),
    model: "claude-sonnet-4-5",
    write: (workdir) => ({ name: "Write", args: { file_path: path.join(workdir, "followup.txt"), content: "PELICAN-7\n" } }),
  },
  gemini: {
    start: startFakeGemini,
    env(home, url) {
      prepareWorkerHome(home);
      return cleanEnv(home, { GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: "fake", GEMINI_CLI_TRUST_WORKSPACE: "true" });
    },
    model: "gemini-2.5-flash",
    write: (workdir) => ({ name: "write_file", args: { file_path: path.join(workdir, "followup.txt"), content: "PELICAN-7\n" } }),
  },
  opencode: {
    start: startFakeOpenAI,
    // Outside the workdir, as the worker suites keep it: the provider is the fake of this run.
    env: (home, url) => cleanEnv(home, opencodeConfig(home, url)),
    model: "fake/fake-model",
    write: (workdir) => ({ name: "write", args: { filePath: path.join(workdir, "followup.txt"), content: "PELICAN-7\n" } }),
  },
  codex: {
    start: startFakeOpenAI,
    env(home, url) {
      // No sandbox_mode in the config: the follow-up's write works only if `--sandbox
      // workspace-write`, given before `resume`, still applies to the resumed session.
      const codexHome = path.join(home, ".codex");
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(
        path.join(codexHome, "config.toml"),
        [
          'model = "gpt-5.5"',
          'model_provider = "fake"',
          'approval_policy = "never"',
          "[model_providers.fake]",
          'name = "Fake"',
          `base_url = "${url}/v1"`,
          'env_key = "FAKE_API_KEY"',
          'wire_api = "responses"',
          "",
        ].join("\n"),
      );
      return cleanEnv(home, { CODEX_HOME: codexHome, FAKE_API_KEY: "fake" });
    },
    model: null,
    write: () => ({ name: "apply_patch", args: { input: "*** Begin Patch\n*** Add File: followup.txt\n+PELICAN-7\n*** End Patch\n" } }),
  },
};

function adapterOf(kind: string): CliAdapter {
  const adapter = cliAdapterFor(kind);
  if (!adapter) throw new Error(`no CLI kind ${kind}`);
  return adapter;
}

/** Runs the adapter's invocation of one job against a fresh fake, as the job driver would (stdin closed), and parses its output. */
async function runTurn(kind: string, home: string, workdir: string, prompt: string, script: Script, followUp?: FollowUp) {
  const setup = setups[kind]!;
  const adapter = adapterOf(kind);
  const fake = await setup.start(script);
  fakes.push(fake);
  const agent = { ...newAgentRow({ name: kind, kind, workdir }, 0) } as AgentRow;
  const spec: JobSpec = { jobId: followUp ? "second" : "first", prompt, workdir, model: setup.model, agent, ...(followUp ? { followUp } : {}) };
  const invocation = adapter.invocation(spec, clientBin(kind as Client));
  const run = await runClient(invocation.command, invocation.args, {
    cwd: invocation.cwd,
    env: { ...setup.env(home, fake.url), ...invocation.env },
    timeoutMs: 150_000,
  });
  const parser = adapter.createParser(spec);
  parser.push(run.stderr, "err");
  parser.push(run.stdout, "out");
  const result: WorkerResult = parser.finish();
  return { fake, run, result, invocation };
}

describe("a follow-up resumes the CLI's own session", () => {
  it.each(Object.keys(setups))("%s", async (kind) => {
    const root = mkdtempSync(path.join(os.tmpdir(), `corral-resume-${kind}-`));
    roots.push(root);
    const home = path.join(root, "home");
    const workdir = path.join(root, "work");
    mkdirSync(home, { recursive: true });
    mkdirSync(workdir, { recursive: true });

    const first = await runTurn(kind, home, workdir, FIRST, [{ kind: "text", text: ANSWER, usage: { input: 100, output: 10 } }]);
    expect(first.run.code, describeRun(first.run)).toBe(0);
    expect(first.result.finalText).toBe(ANSWER);
    const session = first.result.sessionId;
    expect(session, `${kind} printed no session id\n${describeRun(first.run)}`).toBeTruthy();

    const { name, args } = setups[kind]!.write(workdir);
    const second = await runTurn(
      kind,
      home,
      workdir,
      SECOND,
      [
        { kind: "tool", name, args, usage: { input: 200, output: 20 } },
        { kind: "text", text: "Done: wrote followup.txt", usage: { input: 220, output: 5 } },
      ],
      { jobId: "first", workerSession: session ?? null },
    );
    keepSample(kind, "resume", second.run);
    expect(second.run.code, describeRun(second.run)).toBe(0);
    expect(second.result.finalText).toBe("Done: wrote followup.txt");

    // The second run's first model request carries the first turn, in order, then the new prompt.
    const request = mainRequests(second.fake)[0];
    expect(request, describeRun(second.run)).toBeDefined();
    const said = conversation(request?.body);
    const asked = find(said, "user", FIRST);
    const answered = find(said, "assistant", ANSWER, asked + 1);
    const followUp = find(said, "user", SECOND, answered + 1);
    const shown = JSON.stringify(
      said.map((s) => `${s.role}: ${s.text.slice(0, 120)}`),
      null,
      1,
    );
    expect(asked, shown).toBeGreaterThanOrEqual(0);
    expect(answered, shown).toBeGreaterThan(asked);
    expect(followUp, shown).toBeGreaterThan(answered);

    // The follow-up kept its permission to write in the workdir.
    expect(readFileSync(path.join(workdir, "followup.txt"), "utf8").trim()).toBe("PELICAN-7");
    // The conversation keeps one id across its turns, so a third turn resumes the same session.
    expect(second.result.sessionId).toBe(session);
  });
});

describe("a follow-up of a session the CLI does not have fails, never starting afresh", () => {
  /** Ids of the right shape that no run made. */
  const unknown: Record<string, string> = {
    claude: "0b9e1f7a-1111-4222-8333-444455556666",
    gemini: "0b9e1f7a-1111-4222-8333-444455556666",
    codex: "0b9e1f7a-1111-4222-8333-444455556666",
    opencode: "ses_0123456789abABCDEFGHIJKLMN",
  };

  it.each(Object.keys(setups))("%s", async (kind) => {
    const root = mkdtempSync(path.join(os.tmpdir(), `corral-resume-${kind}-`));
    roots.push(root);
    const home = path.join(root, "home");
    const workdir = path.join(root, "work");
    mkdirSync(home, { recursive: true });
    mkdirSync(workdir, { recursive: true });
    const turn = await runTurn(kind, home, workdir, SECOND, [{ kind: "text", text: "fresh", usage: { input: 10, output: 1 } }], {
      jobId: "gone",
      workerSession: unknown[kind]!,
    });
    keepSample(kind, "resume-unknown", turn.run);
    expect(turn.run.code, describeRun(turn.run)).not.toBe(0);
    expect(mainRequests(turn.fake), describeRun(turn.run)).toEqual([]);
    expect(turn.result.finalText).toBeUndefined();
    // Claude says why in its JSON result; the others on stderr, which the job's log keeps.
    if (kind === "claude") expect(turn.result.error).toContain(`No conversation found with session ID: ${unknown.claude}`);
  });
});
