import type { ReadableEvent } from "@corral/shared";
import { acpClientCommand } from "../acp/client-command.js";
import type { AcpClientEvent } from "../acp/events.js";
import { ACP_PRESETS, presetOf } from "../acp/presets.js";
import { BoundedText, jsonLinesParser, num, obj, str } from "../json-lines.js";
import { readable, short } from "../readable.js";
import type { CliAgentKind, Json, JobSpec, UsageReport } from "../types.js";
import { resumedSession, sessionIdOf } from "../worker-session.js";
import { agentFields, executable, field, permissions } from "./fields.js";

/**
 * ACP session ids are the agent's own strings; one goes back on the client's command line (glued:
 * `--load=<id>`), so only a plain token is kept.
 */
const ACP_SESSION = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** The text of a content block that is text; nothing for images, audio, resources. */
const textOf = (content: unknown) => {
  const block = obj(content);
  return block?.type === "text" ? (str(block.text) ?? "") : "";
};

/** What a tool call's content says, in short: its text blocks, else its raw output. */
function toolDetail(update: Json): string | undefined {
  const content = Array.isArray(update.content) ? update.content.map((c) => textOf(obj(c)?.content)).join(" ") : "";
  if (content.trim()) return content;
  const raw = update.rawOutput;
  return typeof raw === "string" ? raw : raw === undefined || raw === null ? undefined : JSON.stringify(raw);
}

/** A tool call's most telling argument: its raw input, else the first file it names. */
function toolInput(update: Json): unknown {
  if (update.rawInput !== undefined && update.rawInput !== null) return update.rawInput;
  const first = Array.isArray(update.locations) ? obj(update.locations[0]) : undefined;
  return first ? { path: first.path } : undefined;
}

const PLAN_MARK: Record<string, string> = { completed: "✓", in_progress: "▸", pending: "○" };

function readUpdate(update: Json): ReadableEvent[] {
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
      return [readable.text(textOf(update.content), true)];
    case "tool_call": {
      const call = readable.call(str(update.title) ?? str(update.name) ?? str(update.kind) ?? "tool", toolInput(update));
      if (update.status === "completed") return [call, readable.result(true, toolDetail(update))];
      if (update.status === "failed") return [call, readable.result(false, toolDetail(update))];
      return [call];
    }
    case "tool_call_update":
      if (update.status === "completed") return [readable.result(true, toolDetail(update))];
      if (update.status === "failed") return [readable.result(false, toolDetail(update))];
      return [];
    case "plan": {
      const entries = Array.isArray(update.entries) ? update.entries.map(obj) : [];
      const steps = entries.map((e) => `${PLAN_MARK[str(e?.status) ?? ""] ?? "○"} ${str(e?.content) ?? ""}`);
      return [{ type: "note", text: short(`plan: ${steps.join(" · ")}`) }];
    }
    default:
      return [];
  }
}

/** The turn's tokens as ACP reports them (`PromptResponse.usage`); input counts the cache reads too. */
function turnUsage(usage: Json | undefined) {
  if (!usage) return undefined;
  const cached = num(usage.cachedReadTokens) ?? 0;
  return {
    inputTokens: (num(usage.inputTokens) ?? 0) + cached + (num(usage.cachedWriteTokens) ?? 0),
    outputTokens: (num(usage.outputTokens) ?? 0) + (num(usage.thoughtTokens) ?? 0),
    cachedInputTokens: cached,
  };
}

export function readEvent(ev: Json): ReadableEvent[] {
  const event = ev as AcpClientEvent & Json;
  switch (event.type) {
    case "session":
      return [
        {
          type: "note",
          text: short(
            `${event.loaded ? "continued" : "new"} ACP session ${str(event.sessionId) ?? ""}${str(event.agent) ? ` with ${event.agent}` : ""}`,
          ),
        },
      ];
    case "update":
      return obj(event.update) ? readUpdate(obj(event.update) as Json) : [];
    case "permission":
      return [
        {
          type: "note",
          text: short(`permission ${event.allowed ? "allowed" : "denied"}: ${str(event.title) || str(event.kind)} (${str(event.reason) ?? ""})`),
        },
      ];
    case "file":
      return [
        readable.call(event.op === "write" ? "write_text_file" : "read_text_file", { path: event.path }),
        readable.result(event.ok === true, str(event.detail)),
      ];
    case "result": {
      const usage = turnUsage(obj(event.usage));
      const stop = str(event.stopReason) ?? "end_turn";
      // Only a turn that ended on its own is done: a cancelled or cut-short one says how it ended.
      if (stop !== "end_turn") {
        const tokens = usage ? ` · ${usage.inputTokens} in / ${usage.outputTokens} out` : "";
        return [{ type: "note", text: short(`turn ${stop === "cancelled" ? "cancelled" : `ended: ${stop}`}${tokens}`) }];
      }
      return usage ? [readable.usage("turn", { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens })] : [];
    }
    case "error":
      return [readable.error(str(event.message) ?? "error")];
    default:
      return [];
  }
}

/** Work between two messages: the text after it is a new message. */
const ENDS_MESSAGE = new Set(["tool_call", "tool_call_update", "plan", "agent_thought_chunk"]);

/**
 * The answer is the agent's last message (what it said after its last tool call or plan);
 * tokens are the turn's, when the agent reports them; the cost is the session's when it reports
 * one in dollars and the session is this job's own (a continued session's cost includes earlier jobs').
 */
export function acpParser(spec: JobSpec) {
  const answer = new BoundedText();
  let answering = false;
  let message: string | undefined;
  let loaded = false;
  let session: string | undefined;
  let error: string | undefined;
  const usage: UsageReport = spec.model ? { model: spec.model } : {};
  let reported = false;
  return jsonLinesParser({
    event(ev) {
      switch (ev.type) {
        case "session":
          session = sessionIdOf(ev.sessionId, ACP_SESSION);
          loaded = ev.loaded === true;
          return undefined;
        case "update": {
          const update = obj(ev.update);
          if (update?.sessionUpdate === "agent_message_chunk") {
            const id = str(update.messageId);
            if (!answering || (id !== undefined && id !== message)) answer.reset();
            answering = true;
            message = id;
            answer.append(textOf(update.content));
            return undefined;
          }
          if (ENDS_MESSAGE.has(str(update?.sessionUpdate) ?? "")) answering = false;
          const cost = obj(update?.cost);
          if (update?.sessionUpdate === "usage_update" && !loaded && str(cost?.currency) === "USD" && num(cost?.amount) !== undefined) {
            usage.costUsd = num(cost?.amount);
            reported = true;
            return { ...usage };
          }
          return undefined;
        }
        case "result": {
          const tokens = turnUsage(obj(ev.usage));
          if (!tokens) return undefined;
          Object.assign(usage, tokens);
          reported = true;
          return { ...usage };
        }
        case "error":
          error = str(ev.message) ?? "the ACP client failed";
          return undefined;
        default:
          return undefined;
      }
    },
    finish() {
      return {
        finalText: answer.value(),
        ...(reported ? { usage: { ...usage } } : {}),
        ...(error ? { error } : {}),
        ...(session ? { sessionId: session } : {}),
      };
    },
  });
}

const agentArguments = field({
  name: "args",
  label: "Arguments, one per line",
  hint: "what starts its ACP mode; empty: a known agent's (opencode: acp, gemini: --acp, copilot: --acp --stdio)",
  input: { type: "list", rows: 2, split: "lines", mono: true },
  whenEmpty: "default",
});

/**
 * Any agent that speaks the Agent Client Protocol over stdio. The worker is Corral's ACP client
 * (agents/acp/client-main.ts), which starts the agent's command as its child; a job is one prompt
 * turn in a session of its workdir, a follow-up loads the earlier job's session. Known commands
 * (agents/acp/presets.ts) get their ACP arguments and their own keys; others run with the agent's env.
 */
export const acpKind: CliAgentKind = {
  kind: "acp",
  provider: "local",
  // A known program bills as its CLI kind does (budgets on anthropic cover claude-agent-acp); others are local.
  providerFor: (fields) => presetOf(fields.command)?.provider,
  // Copilot CLI's non-interactive mode prints plain text; its ACP mode streams tool calls and loads sessions.
  builtins: [{ name: "copilot", description: "GitHub Copilot CLI, over the Agent Client Protocol", command: "copilot" }],
  fields: agentFields({ connection: [executable("acp")], limits: [permissions], wide: [agentArguments] }),
  adding: {
    title: "Add an ACP agent",
    intro:
      "Any agent that speaks the Agent Client Protocol: opencode acp, gemini --acp, claude-agent-acp, codex-acp, copilot --acp --stdio — or your own. Its tool calls stream into the job; its permission requests are answered by the policy below.",
    primary: false,
    presets: ACP_PRESETS.map((preset) => ({
      label: preset.label,
      values: { name: preset.name, command: preset.command, args: preset.args },
    })),
  },
  retries: true,
  resumes: true,
  readEvent,
  cli: {
    defaultBinary: "",
    installHint: "set the agent's command to an ACP agent on PATH (opencode, gemini, claude-agent-acp, codex-acp, copilot) or an absolute path",
    invocation(spec, binary) {
      const session = resumedSession(spec, ACP_SESSION);
      const client = acpClientCommand();
      const preset = presetOf(spec.agent.command);
      const args = spec.agent.args ?? preset?.args ?? [];
      return {
        command: client.command,
        args: [
          ...client.args,
          `--workdir=${spec.workdir}`,
          `--permissions=${spec.agent.permissions ?? "workdir"}`,
          ...(session ? [`--load=${session}`] : []),
          ...(spec.model ? [`--model=${spec.model}`] : []),
          ...(preset?.agentReads ? ["--agent-reads"] : []),
          `--prompt=${spec.prompt}`,
          "--",
          binary,
          ...args,
        ],
        env: client.env,
        cwd: spec.workdir,
      };
    },
    createParser: acpParser,
    // The client ends the turn itself (session/cancel) when it alone is signalled first.
    stopFirst: { signal: "SIGINT", graceMs: 5000 },
    // Only a known program's own (knownCommand): never another agent's logins and settings.
    stateDirs: [],
    ownEnv: (model, agent) => presetOf(agent?.command)?.ownEnv(model) ?? [],
    // Any executable may be named: only a known one is asked its version.
    versionArgs: null,
    knownCommand(agent) {
      const preset = presetOf(agent.command);
      if (!preset) return undefined;
      const installHint = `install it with ${preset.install}${preset.signIn ? ` and ${preset.signIn}` : ""}`;
      return { installHint, versionArgs: preset.versionArgs, stateDirs: preset.stateDirs };
    },
  },
};
