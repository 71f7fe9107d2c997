import { describe, expect, test } from "vitest";
import type { AgentRow } from "../../db/schema.js";
import { ServiceError } from "../../lib/errors.js";
import { newAgentRow } from "../catalog.js";
import { agentKindModule, cliAdapterFor } from "../kind-lookup.js";
import type { CliAdapter, JobSpec } from "../types.js";

/** A CLI kind's adapter, looked up by its kind. */
function cli(kind: string): CliAdapter {
  const adapter = cliAdapterFor(kind);
  if (!adapter) throw new Error(`no CLI kind ${kind}`);
  return adapter;
}

/** A stored agent as the registry returns it: every default filled in. */
const agent = (over: Partial<AgentRow> = {}): AgentRow => ({ ...newAgentRow({ name: "x", kind: "gemini", workdir: "/w" }, 0), ...over }) as AgentRow;

const spec = (over: Partial<JobSpec> = {}): JobSpec => ({
  jobId: "abc123",
  prompt: "say 'hi'; rm -rf $HOME",
  workdir: "/w",
  model: "m1",
  agent: agent(),
  ...over,
});

test("gemini runs as pyCorral did (-m MODEL -y -p PROMPT), streaming JSON events, values glued to their options", () => {
  expect(cli("gemini").invocation(spec(), "/bin/gemini")).toEqual({
    command: "/bin/gemini",
    args: ["--model=m1", "-y", "-o", "stream-json", "--prompt=say 'hi'; rm -rf $HOME"],
    env: {},
    cwd: "/w",
  });
});

test("opencode runs as pyCorral did and keeps its answer in output.md", () => {
  const inv = cli("opencode").invocation(spec(), "opencode");
  expect(inv.args).toEqual(["--log-level", "ERROR", "--model=m1", "run", "--format", "json", "--message=say 'hi'; rm -rf $HOME"]);
  expect(cli("opencode").finalTextFile).toBe("output.md");
});

test("kiro trusts its tools and never asks", () => {
  expect(cli("kiro").invocation(spec({ model: null }), "kiro-cli-chat").args).toEqual([
    "chat",
    "--no-interactive",
    "--trust-all-tools",
    "--",
    "say 'hi'; rm -rf $HOME",
  ]);
});

test("claude may edit files in its workdir without asking", () => {
  expect(cli("claude").invocation(spec(), "claude").args).toEqual([
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "acceptEdits",
    "--model=m1",
    "--",
    "say 'hi'; rm -rf $HOME",
  ]);
});

test("claude gets its agent's role as --append-system-prompt and its tools as --tools, Claude's names, glued to their options", () => {
  const shaped = agent({ kind: "claude", role: "--help me; you review", tools: ["read_file", "write_file", "list_files", "glob", "http_get"] });
  expect(cli("claude").invocation(spec({ agent: shaped }), "claude").args).toEqual([
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "acceptEdits",
    "--append-system-prompt=--help me; you review",
    "--tools=Read,Write,Edit,Glob,WebFetch",
    "--model=m1",
    "--",
    "say 'hi'; rm -rf $HOME",
  ]);
});

test("codex runs non-interactively, writing only in its workdir", () => {
  expect(cli("codex").invocation(spec(), "codex").args).toEqual([
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--sandbox",
    "workspace-write",
    "-C",
    "/w",
    "--model=m1",
    "--",
    "say 'hi'; rm -rf $HOME",
  ]);
});

/**
 * Where each CLI takes the prompt and the model so that no value can be read as an option: after
 * a `--` that ends the options, or glued to its option as `--name=value` (one argv element that a
 * parser never splits into a new option). The compatibility suite checks the same against the
 * real pinned CLIs.
 */
const promptPlacement: Record<string, string> = {
  claude: "after --",
  codex: "after --",
  kiro: "after --",
  gemini: "--prompt=",
  opencode: "--message=",
  agy: "--print=",
};

describe.each(Object.entries(promptPlacement))("%s: values that look like options stay values", (kind, placement) => {
  const adapter = cli(kind);

  const session = kind === "opencode" ? "ses_dd867c090ffeQAzhdrkaTcP0pw" : "4787530e-89f1-4301-bb1a-75b8d5e78f04";
  const resuming = agentKindModule(kind)?.resumes === true;

  test.each(
    ["--version", "-h", "-", "--", "-p=x", "help", "--model=evil", "resume"].flatMap((prompt) => [
      [prompt, false],
      ...(resuming ? [[prompt, true] as const] : []),
    ]),
  )("prompt %j (follow-up: %s)", (prompt, isFollowUp) => {
    const followUp = isFollowUp ? { followUp: { jobId: "first1", workerSession: session } } : {};
    const args = adapter.invocation(spec({ prompt, model: null, ...followUp }), kind).args;
    const tail = placement === "after --" ? ["--", prompt] : [`${placement}${prompt}`];
    expect(args.slice(-tail.length)).toEqual(tail);
    // Nowhere else, and one `--` only: the prompt is never a bare element an option parser reads,
    // so everything before it is what any other prompt gets.
    const plain = adapter.invocation(spec({ prompt: "x", model: null, ...followUp }), kind).args;
    expect(args.slice(0, -tail.length)).toEqual(plain.slice(0, -tail.length));
    expect(args.slice(0, -tail.length)).not.toContain("--");
  });

  test("a model is glued to its option, wherever the options end", () => {
    const args = adapter.invocation(spec({ model: "-x --version" }), kind).args;
    expect(args).toContain("--model=-x --version");
    expect(args).not.toContain("-x --version");
    const end = args.indexOf("--");
    if (end >= 0) expect(args.indexOf("--model=-x --version")).toBeLessThan(end);
  });
});

describe("follow-ups resume the CLI's own session with its real flags (the compatibility suite runs these against the pinned CLIs)", () => {
  const uuid = "4787530e-89f1-4301-bb1a-75b8d5e78f04";
  const followUp = (workerSession: string | null) => ({ followUp: { jobId: "first1", workerSession } });

  test("claude: --resume=<id> (glued: the option takes an optional value), before the prompt's --", () => {
    expect(cli("claude").invocation(spec(followUp(uuid)), "claude").args).toEqual([
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "acceptEdits",
      `--resume=${uuid}`,
      "--model=m1",
      "--",
      "say 'hi'; rm -rf $HOME",
    ]);
  });

  test("gemini: --resume=<id>", () => {
    expect(cli("gemini").invocation(spec(followUp(uuid)), "gemini").args).toEqual([
      "--model=m1",
      "-y",
      "-o",
      "stream-json",
      `--resume=${uuid}`,
      "--prompt=say 'hi'; rm -rf $HOME",
    ]);
  });

  test("opencode: run --session=<id>", () => {
    const id = "ses_dd867c090ffeQAzhdrkaTcP0pw";
    expect(cli("opencode").invocation(spec(followUp(id)), "opencode").args).toEqual([
      "--log-level",
      "ERROR",
      "--model=m1",
      "run",
      "--format",
      "json",
      `--session=${id}`,
      "--message=say 'hi'; rm -rf $HOME",
    ]);
  });

  test("codex: exec's options, then the resume subcommand and its id, then -- and the prompt", () => {
    expect(cli("codex").invocation(spec(followUp(uuid)), "codex").args).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--sandbox",
      "workspace-write",
      "-C",
      "/w",
      "--model=m1",
      "resume",
      uuid,
      "--",
      "say 'hi'; rm -rf $HOME",
    ]);
  });

  test("the kinds with a resume mechanism say so; kiro and command agents do not, so their follow-ups are refused", () => {
    const resuming = ["claude", "codex", "gemini", "opencode", "agy", "kiro", "command"].filter((kind) => agentKindModule(kind)?.resumes === true);
    expect(resuming).toEqual(["claude", "codex", "gemini", "opencode", "agy"]);
  });

  const shapes: Record<string, string> = { claude: uuid, gemini: uuid, codex: uuid, opencode: "ses_dd867c090ffeQAzhdrkaTcP0pw", agy: uuid };

  describe.each(Object.keys(shapes))("%s: a worker's session id is untrusted", (kind) => {
    const adapter = cli(kind);
    const refusal = (workerSession: string | null): ServiceError => {
      try {
        adapter.invocation(spec({ ...followUp(workerSession), agent: agent({ kind }) }), kind);
      } catch (err) {
        if (err instanceof ServiceError) return err;
        throw err;
      }
      throw new Error(`${kind} accepted ${JSON.stringify(workerSession)}`);
    };

    // Options, the CLIs' own selectors (gemini's `latest` and list indexes, codex's thread names),
    // paths, and a valid id with anything around it.
    test.each([
      "--help",
      "-x",
      "--model=evil",
      "latest",
      "3",
      "my-thread",
      "../../etc/passwd",
      "",
      `${shapes[kind]}\n--help`,
      ` ${shapes[kind]}`,
      `${shapes[kind]} --version`,
      `--resume=${shapes[kind]}`,
    ])("%j is refused, naming the session field", (id) => {
      const err = refusal(id);
      expect(err.status).toBe(400);
      expect(err.field).toBe("session");
      expect(err.message).toContain("job first1 cannot be continued");
    });

    test("a follow-up whose worker reported no session is refused, never run as a fresh conversation", () => {
      const err = refusal(null);
      expect(err.field).toBe("session");
      expect(err.message).toMatch(/reported no session id/);
    });

    test("a valid id is one argument of its own or glued to its option, never where options are parsed from the prompt", () => {
      const args = adapter.invocation(spec({ ...followUp(shapes[kind]!), prompt: "--version" }), kind).args;
      const at = args.findIndex((a) => a.includes(shapes[kind]!));
      expect(at).toBeGreaterThanOrEqual(0);
      expect(args.filter((a) => a.includes(shapes[kind]!))).toHaveLength(1);
      const end = args.indexOf("--");
      if (end >= 0) expect(at).toBeLessThan(end);
    });
  });
});

test("a command agent fills its argument template, each placeholder inside one argument", () => {
  const a = agent({ kind: "command", command: "dot", args: ["-Tpng", "-o", "{workdir}/out.png", "--label={prompt}", "{model}"] });
  expect(cli("command").invocation(spec({ agent: a }), "/usr/bin/dot").args).toEqual([
    "-Tpng",
    "-o",
    "/w/out.png",
    "--label=say 'hi'; rm -rf $HOME",
    "m1",
  ]);
});

test("a command agent without a template gets the prompt as its only argument", () => {
  const a = agent({ kind: "command", command: "script.sh" });
  expect(cli("command").invocation(spec({ agent: a }), "script.sh").args).toEqual(["say 'hi'; rm -rf $HOME"]);
});

test("a command agent gets {prompt} as one argument, so a `--` in its template ends the options before it", () => {
  const a = agent({ kind: "command", command: "tool", args: ["--out", "{workdir}", "--", "{prompt}"] });
  expect(cli("command").invocation(spec({ agent: a, prompt: "--version -h\nrm -rf /" }), "tool").args).toEqual([
    "--out",
    "/w",
    "--",
    "--version -h\nrm -rf /",
  ]);
});

test("the plain parser keeps stdout as the final text and ignores stderr", () => {
  const parser = cli("kiro").createParser(spec());
  parser.push("hello\n", "out");
  parser.push("warning\n", "err");
  parser.push("world\n", "out");
  expect(parser.finish()).toEqual({ finalText: "hello\nworld" });
});
