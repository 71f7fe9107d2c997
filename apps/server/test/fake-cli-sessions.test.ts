// The fake CLIs keep sessions the way the real ones do (compat/resume.test.ts proves the real
// ones): run as each adapter invokes its CLI, a first job prints a session id of the real shape,
// and a follow-up built from that id continues the session, whose earlier turns `recall` prints.
// Other tests (follow-ups through Corral, e2e) rely on this.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { newAgentRow } from "../src/agents/catalog.js";
import { cliAdapterFor } from "../src/agents/kind-lookup.js";
import type { CliAdapter, FollowUp, JobSpec, WorkerResult } from "../src/agents/types.js";
import type { AgentRow } from "../src/db/schema.js";
import { fakeBinDir } from "./helpers.js";

const root = mkdtempSync(path.join(os.tmpdir(), "corral-fake-sessions-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function adapterOf(kind: string): CliAdapter {
  const adapter = cliAdapterFor(kind);
  if (!adapter) throw new Error(`no CLI kind ${kind}`);
  return adapter;
}

interface Turn {
  code: number;
  stderr: string;
  result: WorkerResult;
}

/** Runs the fake as the adapter invokes its CLI, with its own HOME, and parses what it printed. */
function run(kind: string, home: string, workdir: string, prompt: string, followUp?: FollowUp): Promise<Turn> {
  const adapter = adapterOf(kind);
  const agent = newAgentRow({ name: kind, kind, workdir }, 0) as AgentRow;
  const spec: JobSpec = { jobId: "j", prompt, workdir, model: null, agent, ...(followUp ? { followUp } : {}) };
  const { command, args, cwd } = adapter.invocation(spec, path.join(fakeBinDir, adapter.defaultBinary));
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { PATH: process.env.PATH, HOME: home } }, (err, stdout, stderr) => {
      const parser = adapter.createParser(spec);
      parser.push(stdout, "out");
      resolve({ code: typeof err?.code === "number" ? err.code : 0, stderr, result: parser.finish() });
    });
  });
}

function place(kind: string) {
  const dir = mkdtempSync(path.join(root, `${kind}-`));
  const home = path.join(dir, "home");
  const workdir = path.join(dir, "work");
  mkdirSync(home);
  mkdirSync(workdir);
  return { dir, home, workdir };
}

describe.each(["claude", "gemini", "opencode", "codex", "agy"])("fake %s", (kind) => {
  test("a follow-up continues the session: same id, earlier turns remembered", async () => {
    const { home, workdir } = place(kind);
    const first = await run(kind, home, workdir, "first turn\nsecond line");
    expect(first.code, first.stderr).toBe(0);
    const session = first.result.sessionId;
    // The adapter's parser keeps only ids of the real CLI's shape, so this also checks the shape.
    expect(session).toBeDefined();

    const second = await run(kind, home, workdir, "recall", { jobId: "j1", workerSession: session ?? null });
    expect(second.code, second.stderr).toBe(0);
    expect(second.result.sessionId).toBe(session);
    expect(second.result.finalText).toBe(`turn 1: first turn | second line\ndone ${kind}`);

    const third = await run(kind, home, workdir, "recall", { jobId: "j2", workerSession: session ?? null });
    expect(third.result.finalText).toBe(`turn 1: first turn | second line\nturn 2: recall\ndone ${kind}`);

    // A fresh job is a new session with nothing to recall.
    const fresh = await run(kind, home, workdir, "recall");
    expect(fresh.result.sessionId).not.toBe(session);
    expect(fresh.result.finalText).toBe(`done ${kind}`);
  });

  test("a session it does not have fails, as the real CLI does, instead of starting afresh", async () => {
    const { home, workdir } = place(kind);
    const unknown = kind === "opencode" ? "ses_0123456789abABCDEFGHIJKLMN" : "0b9e1f7a-1111-4222-8333-444455556666";
    const turn = await run(kind, home, workdir, "recall", { jobId: "gone", workerSession: unknown });
    expect(turn.code).toBe(kind === "gemini" ? 42 : 1);
    expect(turn.result.finalText).toBeUndefined();
    // agy says it in its result (its message is no source's: the fake's own), the others on stderr.
    if (kind === "agy") expect(turn.result.error).toMatch(/conversation .* not found/);
    else expect(turn.stderr).toMatch(/No conversation found|Invalid session identifier|Session not found|no rollout found/);
  });

  test(kind === "codex" ? "codex finds a thread from any workdir" : "the session belongs to its workdir, as the real CLI keeps it", async () => {
    const { dir, home, workdir } = place(kind);
    const first = await run(kind, home, workdir, "hello");
    const elsewhere = path.join(dir, "elsewhere");
    mkdirSync(elsewhere);
    const turn = await run(kind, home, elsewhere, "recall", { jobId: "j1", workerSession: first.result.sessionId ?? null });
    if (kind === "codex") expect(turn.result.finalText).toBe("turn 1: hello\ndone codex");
    else expect(turn.code).not.toBe(0);
  });
});
