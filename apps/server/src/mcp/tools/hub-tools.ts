import {
  HubReadInputSchema,
  HubReceiveInputSchema,
  HubRegisterInputSchema,
  HubSendInputSchema,
  type HubAgent,
  type HubMessage,
} from "@corral/shared";
import type { McpServer } from "@modelcontextprotocol/server";
import { defineTool } from "./define.js";
import type { HubMember } from "../../conversations/hub-member.js";
import { notFound, ServiceError } from "../../lib/errors.js";
import type { Services } from "../../services.js";
import { guarded, keepReporting, textResult } from "./results.js";
import { HUB_WRITES, READS } from "./annotations.js";

/** Seconds a receive waits when the caller does not say. */
const RECEIVE_DEFAULT_S = 60;
/** A read answers at most this many messages, and this many characters of them. */
const READ_PAGE = 50;
const READ_CHARS = 200_000;

/** The MCP session's registration in the conversation hub: at most one at a time. */
export interface HubCaller {
  member: HubMember | null;
}

/** Ends the session's registration when the session closes (its client left or it expired). */
export function hubCaller(server: McpServer, services: Services): HubCaller {
  const caller: HubCaller = { member: null };
  server.server.onclose = () => {
    if (caller.member) void services.conversations.leave(caller.member);
    caller.member = null;
  };
  return caller;
}

const registered = (caller: HubCaller): HubMember => {
  if (!caller.member || caller.member.ended) {
    caller.member = null;
    throw new ServiceError("register first: corral_register(name, session) makes you an agent others can send to", 409, "name");
  }
  return caller.member;
};

/** The session's agents, one line each, for corral_agents. */
export function hubAgentLines(session: string, agents: HubAgent[]): string {
  const line = (a: HubAgent) =>
    `${a.name} (${a.kind === "client" ? "client" : "Corral worker"}) · ${a.online ? "online" : "offline"}${a.label ? ` · ${a.label}` : ""}`;
  return [`session ${session}: ${agents.length} agent(s)`, ...agents.map(line)].join("\n");
}

const messageText = (m: HubMessage) =>
  `--- #${m.id} from ${m.from} to ${m.to}${m.jobId ? ` · job ${m.jobId}` : ""} · ${new Date(m.at).toISOString()} ---\n${m.text}`;

/** corral_register, corral_send, corral_receive and corral_read (corral_agents lists a session, in corral-tools). */
export function registerHubTools(server: McpServer, services: Services, caller: HubCaller): void {
  const hub = services.conversations;

  defineTool(
    server,
    "corral_register",
    {
      title: "Join a conversation",
      annotations: HUB_WRITES,
      description:
        "Join a conversation session under a name, so other agents of that session can send you messages (corral_send) and you can send to them and to Corral's agents. Lasts until this MCP session ends; registering again replaces it.",
      input: HubRegisterInputSchema,
    },
    ({ name, session, label }) =>
      guarded(async () => {
        const previous = caller.member;
        const same = previous && !previous.ended && previous.session === session && previous.name === name;
        if (same) await hub.leave(previous);
        const member = await hub.register(session, name, label ?? null, "mcp");
        if (previous && !same) await hub.leave(previous);
        caller.member = member;
        return textResult(
          `registered as ${name} in session ${session}. Send with corral_send(to, text); wait for messages with corral_receive; see who is here with corral_agents.`,
        );
      }),
  );

  defineTool(
    server,
    "corral_send",
    {
      title: "Send a message",
      annotations: HUB_WRITES,
      description:
        "Send a message to an agent of your session. To a registered agent, it waits in its inbox; to one of Corral's agents (gemini, …), it runs as a job that continues your earlier ones with it, and the answer comes back to you as a message (corral_receive).",
      input: HubSendInputSchema,
    },
    ({ to, text }) =>
      guarded(async () => {
        const message = await hub.send(registered(caller), to, text);
        const worker = message.jobId ? `; job ${message.jobId} is answering, its answer comes to you as a message (corral_receive)` : "";
        return textResult(`sent #${message.id} to ${to}${worker}`);
      }),
  );

  defineTool(
    server,
    "corral_receive",
    {
      title: "Receive messages",
      annotations: HUB_WRITES,
      description:
        "Wait for messages sent to you and take them, oldest first: answers at once when some are waiting, else when one arrives or at the timeout (then 'no message'). Progress notifications keep the call alive while it waits.",
      input: HubReceiveInputSchema,
    },
    ({ timeout_s }, extra) =>
      guarded(async () => {
        const member = registered(caller);
        const timeoutS = timeout_s ?? RECEIVE_DEFAULT_S;
        const started = Date.now();
        const stopReporting = keepReporting(extra, services.config.progressIntervalMs, async () => ({
          progress: Math.round((Date.now() - started) / 1000),
          total: timeoutS,
          message: `waiting for a message for ${member.name} in ${member.session}`,
        }));
        try {
          // Aborted also when the client's connection closes or the session ends: a stopped wait takes nothing.
          const messages = await hub.receive(member, timeoutS * 1000, extra.mcpReq.signal);
          if (!messages.length) return textResult(`no message after ${timeoutS} s`);
          return textResult([`${messages.length} message(s)`, ...messages.map(messageText)].join("\n"));
        } finally {
          stopReporting();
        }
      }),
  );

  defineTool(
    server,
    "corral_read",
    {
      title: "Read a conversation",
      annotations: READS,
      description:
        "Read an agent's message history in your session (what it sent and received), oldest first, after a cursor. The answer ends with the cursor to read on from.",
      input: HubReadInputSchema,
    },
    ({ agent, cursor }) =>
      guarded(async () => {
        const member = registered(caller);
        hub.seen(member);
        if (!(await hub.knows(member.session, agent))) throw notFound(`no agent named ${agent} in session ${member.session}`, "agent");
        const page = await hub.read(member.session, agent, cursor ?? 0, READ_PAGE);
        // Whole messages up to the cap; one larger than the cap alone is cut, so the cursor always moves on.
        const parts: string[] = [];
        let chars = 0;
        let next = cursor ?? 0;
        for (const m of page.messages) {
          const text = messageText(m);
          if (parts.length && chars + text.length > READ_CHARS) break;
          parts.push(text.length > READ_CHARS ? `${text.slice(0, READ_CHARS)}\n… (cut: ${text.length - READ_CHARS} more characters)` : text);
          chars += text.length;
          next = m.id;
        }
        const more = parts.length < page.messages.length || page.messages.length === READ_PAGE;
        const head = parts.length ? `${parts.length} message(s) of ${agent}` : `no messages of ${agent} after cursor ${next}`;
        const foot = more ? `--- more: read again with cursor ${next} ---` : `--- end of history; cursor ${next} ---`;
        return textResult([head, ...parts, foot].join("\n"));
      }),
  );
}
