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
import { notFound } from "../../lib/errors.js";
import type { Services } from "../../services.js";
import { guarded, keepReporting, textResult } from "./results.js";
import { HUB_WRITES, READS } from "./annotations.js";

/** Seconds a receive waits when the caller does not say. */
const RECEIVE_DEFAULT_S = 60;
/** A read answers at most this many messages, and this many characters of them. */
const READ_PAGE = 50;
const READ_CHARS = 200_000;

/** The session's agents, one line each, for corral_agents. */
export function hubAgentLines(session: string, agents: HubAgent[]): string {
  const line = (a: HubAgent) =>
    `${a.name} (${a.kind === "client" ? "client" : "Corral worker"}) · ${a.online ? "online" : "offline"}${a.liveAt ? ` · live at ${a.liveAt}` : ""}${a.label ? ` · ${a.label}` : ""}`;
  return [`session ${session}: ${agents.length} agent(s)`, ...agents.map(line)].join("\n");
}

const messageText = (m: HubMessage) =>
  `--- #${m.id} from ${m.from} to ${m.to}${m.jobId ? ` · job ${m.jobId}` : ""} · ${new Date(m.at).toISOString()} ---\n${m.text}`;

/**
 * corral_register, corral_send, corral_receive and corral_read (corral_agents lists a session, in
 * corral-tools). The registration is the handle's, not the MCP session's: any session (or none) may carry it.
 */
export function registerHubTools(server: McpServer, services: Services): void {
  const hub = services.conversations;

  defineTool(
    server,
    "corral_register",
    {
      title: "Join a conversation",
      annotations: HUB_WRITES,
      description:
        "Join a hub session under a name; returns the handle for corral_send, corral_receive and corral_read. With server (OpenCode: your port), messages to you are posted into your running session.",
      input: HubRegisterInputSchema,
    },
    ({ name, session, label, handle: replaces, server }) =>
      guarded(async () => {
        const { handle, row } = await hub.register(session, name, label ?? null, replaces, server);
        const leaseS = Math.round(services.config.hubLeaseMs / 1000);
        const live = row.targetUrl
          ? `\nMessages to you are posted into ${row.targetSession ? `session ${row.targetSession}` : "the latest session"} of ${row.targetUrl}; your answer there goes back to their sender.`
          : "";
        return textResult(
          `registered as ${name} in session ${session}\nhandle: ${handle}\nPass this handle to corral_send, corral_receive and corral_read; it ends after ${leaseS} s unused.${live}`,
        );
      }),
  );

  defineTool(
    server,
    "corral_send",
    {
      title: "Send a message",
      annotations: HUB_WRITES,
      description: "Message an agent of your hub session; Corral's agents answer with a job.",
      input: HubSendInputSchema,
    },
    ({ handle, to, text }) =>
      guarded(async () => {
        const message = await hub.send(await hub.member(handle), to, text, "mcp");
        const worker = message.jobId
          ? `; job ${message.jobId} is answering, its answer comes to you as a message (corral_receive)`
          : message.live
            ? `; it went into ${to}'s running session, its answer comes to you as a message (corral_receive)`
            : "";
        return textResult(`sent #${message.id} to ${to}${worker}`);
      }),
  );

  defineTool(
    server,
    "corral_receive",
    {
      title: "Receive messages",
      annotations: HUB_WRITES,
      description: "Take your messages, oldest first, waiting up to timeout_s.",
      input: HubReceiveInputSchema,
    },
    ({ handle, timeout_s }, extra) =>
      guarded(async () => {
        const member = await hub.member(handle);
        const timeoutS = timeout_s ?? RECEIVE_DEFAULT_S;
        const started = Date.now();
        const stopReporting = keepReporting(extra, services.config.progressIntervalMs, async () => ({
          progress: Math.round((Date.now() - started) / 1000),
          total: timeoutS,
          message: `waiting for a message for ${member.name} in ${member.session}`,
        }));
        try {
          // Aborted also when the client's connection closes: a stopped wait takes nothing.
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
      description: "An agent's message history in your hub session, after a cursor.",
      input: HubReadInputSchema,
    },
    ({ handle, agent, cursor }) =>
      guarded(async () => {
        const member = await hub.member(handle);
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
