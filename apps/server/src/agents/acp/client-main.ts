// Corral's ACP client: the worker process of an `acp` agent's job. It starts the agent (the
// command after `--`) as its child, speaks the Agent Client Protocol to it over stdio, runs one
// prompt turn in a session of the job's workdir (a new one, or `--load` to continue one), and
// prints what happens as JSON lines (events.ts) for the job's output. Permission requests are
// answered by the agent's policy and file requests served inside the workdir only; no terminal
// is offered (the agent runs its own commands, as its policy and the sandbox let it).
// `--agent-reads` leaves `fs/read_text_file` out of the capabilities, for an agent that cannot
// take the answer for a file that does not exist (its preset says so, agents/acp/presets.ts).
//
// SIGINT (a cancel or a timeout: the job driver signals this process alone first) sends
// `session/cancel` and waits for the turn to end; the driver then ends the whole process group.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { AcpPermissionsSchema } from "@corral/shared";
import { Refusal } from "../../lib/confined-files.js";
import { ACP_EXIT, type AcpClientEvent } from "./events.js";
import { readTextFile, writeTextFile } from "./files.js";
import { decidePermission } from "./permissions.js";

/** Why a turn that did not end normally failed the job. */
const STOPPED: Record<string, string> = {
  refusal: "the agent refused the prompt",
  max_tokens: "the agent stopped at its token limit before the task was done",
  max_turn_requests: "the agent stopped at its limit of model requests before the task was done",
  error: "the agent ended its turn with an error",
};

/**
 * What one printed line may hold of the agent's strings. The job's reader takes a line longer
 * than 1 MiB in pieces, which are never events; a line kept well below that is always one.
 */
const MAX_STRING = 64 * 1024;
const MAX_ITEMS = 1000;
const MAX_DEPTH = 32;

/** `value` with every string, list and nesting bounded (an answer's text is split instead, see printUpdate). */
function bounded(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…[cut: ${value.length} characters]` : value;
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return "[cut: nested too deep]";
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((item) => bounded(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, MAX_ITEMS)
      .map(([key, item]) => [key.slice(0, 200), bounded(item, depth + 1)]),
  );
}

const print = (event: AcpClientEvent) => process.stdout.write(`${JSON.stringify(bounded(event))}\n`);

/** An update as the job's output: a long answer chunk as several (its text whole), anything else bounded. */
function printUpdate(update: acp.SessionUpdate): void {
  if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" && update.content.text.length > MAX_STRING) {
    const { text } = update.content;
    for (let at = 0; at < text.length; at += MAX_STRING) {
      print({ type: "update", update: { ...update, content: { ...update.content, text: text.slice(at, at + MAX_STRING) } } });
    }
    return;
  }
  print({ type: "update", update });
}
/** An error's message; an agent's JSON-RPC error says why in its data's `details` ("Internal error" alone says nothing). */
function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return typeof err === "object" ? JSON.stringify(err) : String(err);
  const details = (err as { data?: { details?: unknown } }).data?.details;
  return typeof details === "string" && details.trim() ? `${err.message}: ${details.slice(0, 2000)}` : err.message;
}

function fail(message: string, code: number = ACP_EXIT.failed): never {
  // Agents' names, models and errors are in it: a job's error stays short.
  print({ type: "error", message: message.length > 4000 ? `${message.slice(0, 4000)}…` : message });
  process.exit(code);
}

const { values, positionals } = (() => {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      options: {
        workdir: { type: "string" },
        permissions: { type: "string", default: "workdir" },
        prompt: { type: "string" },
        load: { type: "string" },
        model: { type: "string" },
        "agent-reads": { type: "boolean", default: false },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    return fail(`acp client: ${messageOf(err)}`, ACP_EXIT.usage);
  }
})();
const [command, ...agentArgs] = positionals;
const workdir = values.workdir;
const prompt = values.prompt;
const policy = AcpPermissionsSchema.safeParse(values.permissions);
if (!command || !workdir || prompt === undefined || !policy.success) {
  fail(
    "acp client: usage: --workdir=DIR --prompt=TEXT [--permissions=workdir|deny|allow] [--load=SESSION] [--model=M] [--agent-reads] -- COMMAND [ARGS…]",
    ACP_EXIT.usage,
  );
}

const agentProcess = spawn(command, agentArgs, { cwd: workdir, stdio: ["pipe", "pipe", "inherit"] });
agentProcess.on("error", (err) => fail(`could not start the ACP agent ${command}: ${err.message}`));
let turnEnded = false;
agentProcess.on("exit", (code, signal) => {
  if (!turnEnded) fail(`the ACP agent ${command} exited before its turn ended (${signal ? `signal ${signal}` : `exit code ${code}`})`);
});

/**
 * Only updates after this job's prompt is sent are its output: before it, a `session/load`
 * replays the earlier jobs' turns (Gemini CLI goes on replaying after answering the load).
 */
let prompted = false;
let lastUpdateAt = 0;
/** A loaded session's replay is over once updates have paused this long (or, streaming on, after REPLAY_MAX_MS). */
const REPLAY_QUIET_MS = 300;
const REPLAY_MAX_MS = 10_000;

/**
 * Tool calls reported so far. The first report of one opens it in the output as a `tool_call`,
 * whether the agent sent that, a `tool_call_update` (ACP v2's way) or only a permission request
 * (Gemini CLI reports a call it asks about no other way).
 */
const toolCalls = new Set<string>();
const MAX_TOOL_CALLS = 10_000;
function opens(id: string): boolean {
  if (toolCalls.has(id)) return false;
  toolCalls.add(id);
  if (toolCalls.size > MAX_TOOL_CALLS) toolCalls.delete(toolCalls.values().next().value as string);
  return true;
}

/** A cancel this client sent (the job's cancel or timeout); and the last tool call the policy refused. */
let cancelSent = false;
let refused: string | undefined;

const client = acp
  .client({ name: "corral" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    lastUpdateAt = Date.now();
    if (!prompted) return;
    const update = params.update;
    if (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") {
      if (opens(update.toolCallId)) {
        print({ type: "update", update: { ...update, sessionUpdate: "tool_call" } });
        return;
      }
    }
    printUpdate(update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    if (opens(params.toolCall.toolCallId)) print({ type: "update", update: { ...params.toolCall, sessionUpdate: "tool_call" } });
    const decision = decidePermission(policy.data, workdir, params.toolCall, params.options);
    print({
      type: "permission",
      title: params.toolCall.title ?? "",
      kind: params.toolCall.kind ?? "other",
      allowed: decision.allowed,
      reason: decision.reason,
    });
    if (!decision.allowed) refused = (params.toolCall.title || params.toolCall.kind || "a tool call").slice(0, 200);
    return { outcome: decision.optionId ? { outcome: "selected", optionId: decision.optionId } : { outcome: "cancelled" } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    return served("read", params.path, () => ({ content: readTextFile(workdir, params.path, params.line, params.limit) }));
  })
  .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
    return served("write", params.path, async () => {
      await writeTextFile(workdir, params.path, params.content);
      return {};
    });
  });

/** A file request answered (or refused, with why) and told in the output. */
async function served<T>(op: "read" | "write", path: string, run: () => T | Promise<T>): Promise<T> {
  if (turnEnded) {
    print({ type: "file", op, path, ok: false, detail: "refused: the turn has ended" });
    throw acp.RequestError.invalidRequest(undefined, "refused: the turn has ended");
  }
  if (policy.data === "deny") {
    print({ type: "file", op, path, ok: false, detail: "the agent's permissions are deny" });
    throw acp.RequestError.invalidParams(undefined, "refused: the agent's permissions are deny");
  }
  try {
    const result = await run();
    print({ type: "file", op, path, ok: true, detail: "" });
    return result;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      print({ type: "file", op, path, ok: false, detail: "no such file" });
      throw acp.RequestError.resourceNotFound(path);
    }
    const detail = err instanceof Refusal ? `refused: ${err.message}` : messageOf(err);
    print({ type: "file", op, path, ok: false, detail });
    throw acp.RequestError.invalidParams(undefined, detail);
  }
}

const stream = acp.ndJsonStream(
  Writable.toWeb(agentProcess.stdin) as WritableStream<Uint8Array>,
  Readable.toWeb(agentProcess.stdout) as ReadableStream<Uint8Array>,
);

const stopReason = await client
  .connectWith(stream, async (agent) => {
    const init = await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: !values["agent-reads"], writeTextFile: true }, terminal: false },
      clientInfo: { name: "corral", version: "1" },
    });
    const agentName = init.agentInfo ? `${init.agentInfo.title ?? init.agentInfo.name} ${init.agentInfo.version}`.trim() : null;
    let sessionId: string;
    let configOptions: acp.SessionConfigOption[] | null | undefined;
    if (values.load !== undefined) {
      if (!init.agentCapabilities?.loadSession) {
        fail(
          `${agentName ?? command} cannot continue a session: it does not offer session/load, so a follow-up cannot run; launch a new job instead`,
        );
      }
      const loaded = await agent
        .request(acp.methods.agent.session.load, { sessionId: values.load, cwd: workdir, mcpServers: [] })
        .catch((err: unknown) => fail(`${agentName ?? command} could not load session ${values.load} to continue it: ${messageOf(err)}`));
      await replayOver();
      sessionId = values.load;
      configOptions = loaded?.configOptions;
    } else {
      const created = await agent.request(acp.methods.agent.session.new, { cwd: workdir, mcpServers: [] });
      sessionId = created.sessionId;
      configOptions = created.configOptions;
    }
    print({ type: "session", sessionId, agent: agentName, loaded: values.load !== undefined });
    if (values.model !== undefined) await chooseModel(agent, sessionId, configOptions, values.model);

    const cancel = () => {
      if (cancelSent) process.exit(ACP_EXIT.cancelled);
      cancelSent = true;
      void agent.notify(acp.methods.agent.session.cancel, { sessionId });
    };
    process.on("SIGINT", cancel);
    process.on("SIGTERM", cancel);
    prompted = true;
    const response = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: prompt }] });
    turnEnded = true;
    print({ type: "result", stopReason: response.stopReason, usage: response.usage ?? null });
    return response.stopReason;
  })
  .catch((err: unknown) => fail(`ACP: ${messageOf(err)}`));

agentProcess.stdin.end();
agentProcess.kill("SIGTERM");
if (stopReason === "end_turn") process.exit(ACP_EXIT.ok);
if (stopReason === "cancelled") {
  if (cancelSent) process.exit(ACP_EXIT.cancelled);
  // No cancel was asked: the agent gave up its turn itself (Codex does when a permission is refused).
  fail(refused === undefined ? "the agent cancelled its turn itself" : `the agent stopped its turn when ${refused} was refused permission`);
}
fail(STOPPED[String(stopReason)] ?? `the agent ended its turn with ${String(stopReason)}`);

/** Resolves once the updates of a session/load's replay have paused (REPLAY_QUIET_MS after the last, or the load's answer). */
async function replayOver() {
  const answered = Date.now();
  while (Date.now() - Math.max(lastUpdateAt, answered) < REPLAY_QUIET_MS && Date.now() - answered < REPLAY_MAX_MS) await sleep(25);
}

/** The job's model, through the session's `model` option; refused clearly when the agent offers none, or not that one. */
async function chooseModel(agent: acp.ClientContext, sessionId: string, options: acp.SessionConfigOption[] | null | undefined, model: string) {
  const option = options?.find((o) => o.category === "model" && o.type === "select");
  if (!option || option.type !== "select") {
    fail(`this ACP agent lets no client choose its model; set the model in the agent's own settings and launch without one (asked for ${model})`);
  }
  const choices = option.options.flatMap((o) => ("options" in o ? o.options : [o])).map((o) => o.value);
  if (!choices.includes(model)) {
    fail(`this ACP agent has no model ${model}; it offers ${choices.slice(0, 20).join(", ")}${choices.length > 20 ? ", …" : ""}`);
  }
  await agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: option.id, value: model });
}
