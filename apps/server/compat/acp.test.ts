// The `acp` kind against real ACP agents, each added over REST as a user adds one in the panel
// (its command, no arguments: the preset's), with the fake of its LLM API scripted to make a tool
// call: OpenCode 1.18.33 (`opencode acp`), Gemini CLI 0.61.0 (`gemini --acp`), and Zed's adapters
// claude-agent-acp 0.23.1 (Claude Code through the Claude Agent SDK it bundles) and codex-acp
// 0.16.0 (Codex built in), pinned in pins.json's "acp" set. For each: a job runs to its answer
// with the tool call streamed (its status, its result), a follow-up continues the session
// (session/load: the model sees the first turn), a cancel mid-turn while the model holds its
// answer ends the job cancelled with nothing of it left running, and permission requests are
// answered by the agent's policy both ways, each answer in the job's output.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { isFinalStatus, type Job, type OutputPage, type ReadablePage, readableText } from "@corral/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupAlive } from "../src/jobs/process-group.js";
import { startFakeAnthropic } from "../test/fixtures/fake-llm/anthropic.js";
import { startFakeGemini } from "../test/fixtures/fake-llm/gemini.js";
import { startFakeOpenAI } from "../test/fixtures/fake-llm/openai.js";
import type { FakeServer, Script } from "../test/fixtures/fake-llm/script.js";
import { api, startServer, type TestServer, until } from "../test/helpers.js";
import { type Client, type ClientSet, clientBuild, prepareWorkerHome } from "./lib/clients.js";
import { conversation, find, mainRequests } from "./lib/conversation.js";
import { FAKE_OPENCODE_MODEL, opencodeConfig } from "./lib/jobs.js";

let server: TestServer;
const fakes: FakeServer[] = [];
beforeAll(async () => {
  server = await startServer();
  prepareWorkerHome(server.root);
});
afterAll(async () => {
  await server?.close();
  await Promise.all(fakes.map((f) => f.close()));
});

const FIRST = "Create hello.txt with a greeting.";
const SECOND = "What did you write, in one line?";

/** How one agent is pointed at its fake API and what its model calls to write a file. */
interface Setup {
  label: string;
  client: Client;
  set: ClientSet;
  start(script: Script): Promise<FakeServer>;
  /** The agent's env for a fake at `url`. */
  env(url: string): Record<string, string>;
  model: string | null;
  write(file: string, content: string): { name: string; args: Record<string, unknown> };
  /** Its writes come to Corral's client as `fs/write_text_file` (the others write themselves). */
  writesThroughClient: boolean;
  /** Its refused write: a path outside the workdir its own checks let through to the question, else "deny" refuses one inside. */
  refusedOutside: boolean;
  /** A refusal ends its turn (stopReason cancelled), so the job fails saying what was refused. */
  stopsOnRefusal: boolean;
}

/** Codex (the adapter's) config: its provider the fake; left on its default approvals, it asks before edits. */
function codexHome(url: string): Record<string, string> {
  const home = path.join(server.root, "codex-home");
  mkdirSync(home, { recursive: true });
  writeFileSync(
    path.join(home, "config.toml"),
    [
      'model = "gpt-5.5"',
      'model_provider = "fake"',
      "[model_providers.fake]",
      'name = "Fake"',
      `base_url = "${url}/v1"`,
      'env_key = "FAKE_API_KEY"',
      'wire_api = "responses"',
      "",
    ].join("\n"),
  );
  return { CODEX_HOME: home, FAKE_API_KEY: "fake" };
}

const setups = {
  gemini: {
    label: "Gemini CLI 0.61.0 (gemini --acp)",
    client: "gemini",
    set: "pinned",
    start: startFakeGemini,
    // Gemini CLI asks its client before every edit or command unless in yolo / auto-edit mode.
    env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: "fake", GEMINI_CLI_TRUST_WORKSPACE: "true" }),
    model: null,
    write: (file, content) => ({ name: "write_file", args: { file_path: file, content } }),
    writesThroughClient: true,
    // It refuses a path outside its workspace itself, never asking.
    refusedOutside: false,
    stopsOnRefusal: false,
  },
  opencode: {
    label: "OpenCode 1.18.33 (opencode acp)",
    client: "opencode",
    set: "pinned",
    start: startFakeOpenAI,
    // OpenCode asks its client only for what its config says "ask" (edits are allowed by default);
    // a file outside its project it always asks about (its external_directory permission).
    env: (url) => opencodeConfig(server.root, url, { edit: "ask", bash: "ask", webfetch: "deny" }),
    // Chosen through the session's model option, as Corral does for a job's model.
    model: FAKE_OPENCODE_MODEL,
    write: (file, content) => ({ name: "write", args: { filePath: file, content } }),
    writesThroughClient: true,
    refusedOutside: true,
    stopsOnRefusal: false,
  },
  claude: {
    label: "Claude Code through claude-agent-acp 0.23.1",
    client: "claude-agent-acp",
    set: "acp",
    start: startFakeAnthropic,
    // Claude Code asks (through the SDK's canUseTool) before edits in its default permission mode.
    env: (url) => ({
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: "fake",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
    }),
    model: null,
    write: (file, content) => ({ name: "Write", args: { file_path: file, content } }),
    writesThroughClient: false,
    refusedOutside: true,
    stopsOnRefusal: false,
  },
  codex: {
    label: "Codex through codex-acp 0.16.0",
    client: "codex-acp",
    set: "acp",
    start: startFakeOpenAI,
    env: codexHome,
    model: null,
    write: (file, content) => ({
      name: "apply_patch",
      args: { input: `*** Begin Patch\n*** Add File: ${file}\n+${content.trimEnd()}\n*** End Patch\n` },
    }),
    writesThroughClient: false,
    refusedOutside: true,
    // Its only "no" to a patch is "abort", which ends the turn.
    stopsOnRefusal: true,
  },
} satisfies Record<string, Setup>;

function workdir(name: string): string {
  const dir = path.join(server.root, "jobs", name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A fake API for the agent's next jobs, its env pointed at it (the agent's other settings kept). */
async function fakeFor(setup: Setup, agent: string, script: Script): Promise<FakeServer> {
  const fake = await setup.start(script);
  fakes.push(fake);
  const res = await api(server, "PATCH", `/api/agents/${agent}`, { env: { TMPDIR: path.join(server.root, "tmp"), ...setup.env(fake.url) } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return fake;
}

async function launch(agent: string, body: Record<string, unknown>): Promise<string> {
  const launched = await api<Job>(server, "POST", "/api/jobs", { agent, ...body });
  expect(launched.status, JSON.stringify(launched.body)).toBe(201);
  return launched.body.id;
}

async function ended(id: string): Promise<Job> {
  return until(
    async () => {
      const res = await api<Job>(server, "GET", `/api/jobs/${id}`);
      return isFinalStatus(res.body.status) ? res.body : undefined;
    },
    120_000,
    `job ${id} to end`,
  );
}

const outputOf = async (id: string) => (await api<OutputPage>(server, "GET", `/api/jobs/${id}/output`)).body.chunks.map((c) => c.text).join("");
const readableOf = async (id: string) => (await api<ReadablePage>(server, "GET", `/api/jobs/${id}/readable`)).body.events.map(readableText);

/** The client's JSON lines of one kind (the job's output as Corral's ACP client printed it; the agent's stderr is there too). */
function linesOf(output: string, type: string): Record<string, unknown>[] {
  return output.split("\n").flatMap((line) => {
    try {
      const event = JSON.parse(line) as Record<string, unknown>;
      return event?.type === type ? [event] : [];
    } catch {
      return [];
    }
  });
}

/** The tool call updates of the job's output, as [sessionUpdate, status] pairs. */
const toolStatuses = (output: string) =>
  linesOf(output, "update")
    .map((e) => e.update as Record<string, unknown>)
    .filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update")
    .map((u) => [u.sessionUpdate, u.status]);

type Kind = keyof typeof setups;
type Step = "job" | "follow-up" | "cancel" | "refused";

/** Each agent's first job, which its follow-up continues. */
const firstJobs = new Map<Kind, Job>();
const withModel = (setup: Setup) => (setup.model ? { model: setup.model } : {});

/**
 * Gemini CLI 0.61.0 cannot load a session in the UTC minute it was created: its session/load
 * starts recording the session anew before reading it, into the same file (named by the minute),
 * and the file no longer holds the conversation ("No previous sessions found for this project",
 * the session lost: google-gemini/gemini-cli#28693). Its follow-up runs last and waits for the
 * minute to turn if it has not already.
 */
async function pastGeminiSessionMinute(sessionId: string): Promise<void> {
  const chats = path.join(server.root, ".gemini", "tmp");
  const minutes = readdirSync(chats, { recursive: true, encoding: "utf8" })
    .map((file) => new RegExp(`session-(\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d)-${sessionId.slice(0, 8)}\\.jsonl$`).exec(file)?.[1])
    .filter((minute) => minute !== undefined);
  expect(minutes.length, `Gemini CLI's file of session ${sessionId}`).toBeGreaterThan(0);
  const now = () => new Date().toISOString().slice(0, 16).replace(/:/g, "-");
  await until(async () => (minutes.includes(now()) ? undefined : true), 65_000, "the next UTC minute");
}

function steps(kind: Kind, only: readonly Step[]) {
  const setup: Setup = setups[kind];
  const agent = `${kind}_acp`;
  const denying = `${kind}_acp_deny`;
  const runs = (step: Step) => only.includes(step);

  describe(`${setup.label} as an acp agent: ${only.join(", ")}`, () => {
    if (runs("job"))
      it("runs a job to its answer: the tool call streams with its status, the permission is allowed inside the workdir", async () => {
        const dir = workdir(`${kind}-first`);
        const { name, args } = setup.write(path.join(dir, "hello.txt"), "hello from acp\n");
        await fakeFor(setup, agent, [
          { kind: "tool", name, args, usage: { input: 1000, output: 20 } },
          { kind: "text", text: "I wrote hello.txt.", usage: { input: 1100, output: 8 } },
        ]);
        const id = await launch(agent, { prompt: FIRST, workdir: dir, ...withModel(setup) });
        const first = await ended(id);
        const output = await outputOf(id);
        expect(first.status, `${first.error ?? ""}\n${output}`).toBe("succeeded");
        firstJobs.set(kind, first);
        expect(first.finalText).toBe("I wrote hello.txt.");
        expect(readFileSync(path.join(dir, "hello.txt"), "utf8")).toBe("hello from acp\n");
        expect(first.workerSession).toBeTruthy();

        // Opened, then completed: the first report is always a tool_call, whatever the agent sent.
        const statuses = toolStatuses(output);
        expect(statuses[0]?.[0], output).toBe("tool_call");
        expect(statuses.at(-1)).toEqual(["tool_call_update", "completed"]);
        // The agent asked, the policy allowed it, and its write came through Corral's client.
        expect(linesOf(output, "permission")).toEqual([expect.objectContaining({ kind: "edit", allowed: true, reason: "inside the workdir" })]);
        if (setup.writesThroughClient) {
          expect(linesOf(output, "file")).toContainEqual(expect.objectContaining({ op: "write", path: path.join(dir, "hello.txt"), ok: true }));
        }

        // The Readable view: the call, the permission answer, its result, then the answer.
        const lines = await readableOf(id);
        const call = lines.findIndex((l) => l.startsWith("→ "));
        const allowed = lines.findIndex((l) => l.startsWith("· permission allowed:"));
        const result = lines.findIndex((l) => l.startsWith("← ok"));
        const answer = lines.findIndex((l) => l.includes("I wrote"));
        expect(call, lines.join("\n")).toBeGreaterThanOrEqual(0);
        expect(allowed, lines.join("\n")).toBeGreaterThan(call);
        expect(result, lines.join("\n")).toBeGreaterThan(allowed);
        expect(answer, lines.join("\n")).toBeGreaterThan(result);
      });

    if (runs("follow-up"))
      it("continues the session in a follow-up (session/load): the model sees the first turn, the replay is not this job's", async () => {
        const first = firstJobs.get(kind);
        expect(first, "the first job").toBeDefined();
        if (!first?.workerSession) return;
        if (kind === "gemini") await pastGeminiSessionMinute(first.workerSession);
        // Picked by tool results: the follow-up's request carries the first turn's one.
        const fake = await fakeFor(setup, agent, [{ kind: "text", text: "I wrote a greeting.", usage: { input: 1200, output: 6 } }]);
        const id = await launch(agent, { prompt: SECOND, session: first.id, ...withModel(setup) });
        const next = await ended(id);
        const output = await outputOf(id);
        expect(next.status, `${next.error ?? ""}\n${output}`).toBe("succeeded");
        expect(next.workdir).toBe(first.workdir);
        expect(next.workerSession).toBe(first.workerSession);
        // Only this turn's answer: the replayed one neither shows nor joins it.
        expect(next.finalText).toBe("I wrote a greeting.");
        expect(linesOf(output, "session")).toEqual([expect.objectContaining({ sessionId: first.workerSession, loaded: true })]);
        expect(output).not.toContain("I wrote hello.txt.");
        expect(toolStatuses(output)).toEqual([]);
        expect((await readableOf(id)).some((l) => l.startsWith("· continued ACP session"))).toBe(true);

        const said = conversation(mainRequests(fake).at(-1)?.body);
        const shown = JSON.stringify(
          said.map((s) => `${s.role}: ${s.text.slice(0, 80)}`),
          null,
          1,
        );
        const asked = find(said, "user", FIRST);
        const answered = find(said, "assistant", "I wrote hello.txt.", asked + 1);
        expect(asked, shown).toBeGreaterThanOrEqual(0);
        expect(answered, shown).toBeGreaterThan(asked);
        expect(find(said, "user", SECOND, answered + 1), shown).toBeGreaterThan(answered);
      });

    if (runs("cancel"))
      it("cancels mid-turn while the model holds its answer: the turn ends cancelled, then the job, and its process group is gone", async () => {
        const fake = await fakeFor(setup, agent, [{ kind: "hang" }]);
        const id = await launch(agent, { prompt: "Take your time.", workdir: workdir(`${kind}-cancel`), ...withModel(setup) });
        await until(async () => (mainRequests(fake).length > 0 ? true : undefined), 90_000, `${kind}'s model request`);
        const running = (await api<Job>(server, "GET", `/api/jobs/${id}`)).body;
        expect(running.status).toBe("running");
        expect(running.pid).toBeGreaterThan(1);
        const cancelled = await api(server, "POST", `/api/jobs/${id}/cancel`);
        expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
        const job = await ended(id);
        expect(job.status).toBe("cancelled");
        // The agent ended its turn on session/cancel (it was not only killed), dropping the request it held.
        expect(linesOf(await outputOf(id), "result")).toEqual([expect.objectContaining({ stopReason: "cancelled" })]);
        await until(async () => (mainRequests(fake)[0]?.abandoned ? true : undefined), 10_000, "the held model request to be dropped");
        expect(groupAlive(running.pid as number)).toBe(false);
      });

    if (runs("refused"))
      it("answers permission requests by the policy: a refused one is logged, its tool call fails and nothing is written", async () => {
        const refusing = setup.refusedOutside ? agent : denying;
        const dir = workdir(`${kind}-refused`);
        const target = setup.refusedOutside ? path.join(server.root, `${kind}-outside.txt`) : path.join(dir, "denied.txt");
        const { name, args } = setup.write(target, "should not be written\n");
        await fakeFor(setup, refusing, [
          { kind: "tool", name, args, usage: { input: 1000, output: 20 } },
          { kind: "text", text: "The write was refused.", usage: { input: 1100, output: 8 } },
        ]);
        const id = await launch(refusing, { prompt: "Write the file.", workdir: dir, ...withModel(setup) });
        const job = await ended(id);
        const output = await outputOf(id);
        expect(existsSync(target)).toBe(false);
        const [asked, ...more] = linesOf(output, "permission");
        expect(more, output).toEqual([]);
        expect(asked, output).toMatchObject({ allowed: false });
        expect(asked?.reason).toBe(
          !setup.refusedOutside
            ? "the agent's permissions are deny"
            : // OpenCode's question names the folder as an "other" kind; the others name the file in an edit.
              kind === "opencode"
              ? "other tools are not confined to the workdir (permissions: workdir)"
              : `${target} is outside the workdir`,
        );
        if (setup.stopsOnRefusal) {
          expect(job.status).toBe("failed");
          expect(job.error).toContain(`the agent stopped its turn when ${String(asked?.title)} was refused permission`);
        } else {
          expect(job.status, `${job.error ?? ""}\n${output}`).toBe("succeeded");
        }
        const lines = await readableOf(id);
        const call = lines.findIndex((l) => l.startsWith("→ "));
        const denied = lines.findIndex((l) => l.startsWith("· permission denied:"));
        expect(call, lines.join("\n")).toBeGreaterThanOrEqual(0);
        expect(denied, lines.join("\n")).toBeGreaterThan(call);
      });
  });
}

beforeAll(async () => {
  // Added as in the panel: the command, no arguments (its preset's: acp, --acp), a policy.
  for (const kind of Object.keys(setups) as Kind[]) {
    const setup: Setup = setups[kind];
    const command = clientBuild(setup.client, setup.set).bin;
    const policies = setup.refusedOutside
      ? ([["workdir", ""]] as const)
      : ([
          ["workdir", ""],
          ["deny", "_deny"],
        ] as const);
    for (const [permissions, suffix] of policies) {
      const name = `${kind}_acp${suffix}`;
      const created = await api(server, "POST", "/api/agents", { name, kind: "acp", command, workdir: workdir(name), permissions });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
  }
});

// Gemini CLI's follow-up last, a minute's turn after its first job at best (see pastGeminiSessionMinute).
steps("gemini", ["job", "cancel", "refused"]);
steps("opencode", ["job", "follow-up", "cancel", "refused"]);
steps("claude", ["job", "follow-up", "cancel", "refused"]);
steps("codex", ["job", "follow-up", "cancel", "refused"]);
steps("gemini", ["follow-up"]);
