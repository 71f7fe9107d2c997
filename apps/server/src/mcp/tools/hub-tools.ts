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
import type { HubLinks } from "../hub-link.js";
import { guarded, keepReporting, textResult } from "./results.js";
import { HUB_WRITES, READS } from "./annotations.js";

/** Seconds a receive waits when the caller does not say. */
const RECEIVE_DEFAULT_S = 60;
/** A read answers at most this many messages, and this many characters of them. */
const READ_PAGE = 50;
const READ_CHARS = 200_000;

/** How long ago, in the largest whole unit: `12 s ago`, `4 min ago`, `2 h ago`, `3 d ago`. */
export function agoText(at: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** The session's agents, one line each, for corral_agents: a client says when it was last seen. */
export function hubAgentLines(session: string, agents: HubAgent[], now = Date.now()): string {
  const line = (a: HubAgent) => {
    const seen = a.lastSeenAt === null ? "" : ` · last seen ${agoText(a.lastSeenAt, now)} (${new Date(a.lastSeenAt).toISOString()})`;
    return `${a.name} (${a.kind === "client" ? "client" : "Corral worker"}) · ${a.online ? "online" : "offline"}${seen}${a.liveAt ? ` · live at ${a.liveAt}` : ""}${a.label ? ` · ${a.label}` : ""}`;
  };
  return [`session ${session}: ${agents.length} agent(s)`, ...agents.map(line)].join("\n");
}

const messageText = (m: HubMessage) =>
  `--- #${m.id} from ${m.from} to ${m.to}${m.jobId ? ` · job ${m.jobId}` : ""} · ${new Date(m.at).toISOString()} ---\n${m.text}`;

/**
 * corral_register, corral_send, corral_receive and corral_read (corral_agents lists a session, in
 * corral-tools). The registration is the handle's, not the MCP session's: any session (or none) may
 * carry it. The 2025-11-25 session a call with the handle came through holds it online while its
 * GET stream is open, and pushes to it when its client takes channel events (`hubLinks`).
 */
export function registerHubTools(server: McpServer, services: Services, hubLinks: HubLinks): void {
  const hub = services.conversations;
  /** The live registration with this handle, tied to the session the call came through. */
  const member = async (handle: string, extra: { sessionId?: string }) => {
    const found = await hub.member(handle);
    hubLinks.get(extra.sessionId)?.bind(found);
    return found;
  };

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
    ({ name, session, label, handle: replaces, server, push }, extra) =>
      guarded(async () => {
        const { handle, member: registered, row } = await hub.register(session, name, label ?? null, replaces, server);
        const link = hubLinks.get(extra.sessionId);
        link?.bind(registered, push === true);
        const { hubLeaseMs, hubPresenceMs } = services.config;
        const leaseS = Math.round(hubLeaseMs / 1000);
        const presenceS = Math.round(hubPresenceMs / 1000);
        const live = row.targetUrl
          ? `\nMessages to you are posted into ${row.targetSession ? `session ${row.targetSession}` : "the latest session"} of ${row.targetUrl}; your answer there goes back to their sender.`
          : "";
        const pushed = !push
          ? ""
          : link
            ? "\nMessages to you, and the end of each job you launch, come as channel events while this MCP session's stream is open; answer with corral_send."
            : "\npush: this request has no MCP session (2026-07-28), so nothing can be pushed; take messages with corral_receive.";
        return textResult(
          `registered as ${name} in session ${session}\nhandle: ${handle}\nPass this handle to corral_send, corral_receive and corral_read. You show online while you call or hold this MCP session's stream, offline ${presenceS} s after; the handle ends after ${leaseS} s unused.${live}${pushed}`,
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
    ({ handle, to, text }, extra) =>
      guarded(async () => {
        const message = await hub.send(await member(handle, extra), to, text, "mcp");
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
        const caller = await member(handle, extra);
        const timeoutS = timeout_s ?? RECEIVE_DEFAULT_S;
        const started = Date.now();
        const stopReporting = keepReporting(extra, services.config.progressIntervalMs, async () => ({
          progress: Math.round((Date.now() - started) / 1000),
          total: timeoutS,
          message: `waiting for a message for ${caller.name} in ${caller.session}`,
        }));
        try {
          // Aborted also when the client's connection closes: a stopped wait takes nothing.
          const messages = await hub.receive(caller, timeoutS * 1000, extra.mcpReq.signal);
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
    ({ handle, agent, cursor }, extra) =>
      guarded(async () => {
        const caller = await member(handle, extra);
        if (!(await hub.knows(caller.session, agent))) throw notFound(`no agent named ${agent} in session ${caller.session}`, "agent");
        const page = await hub.read(caller.session, agent, cursor ?? 0, READ_PAGE);
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
