import type { HubAgent, HubMessage, HubSessionSummary } from "@corral/shared";
import { useEffect, useState } from "react";
import { EmptyState, ErrorState, Loading } from "../components/states.js";
import { When } from "../components/when.js";
import { useConversation, useConversationSessions } from "../hooks/use-conversations.js";
import { useDocumentTitle } from "../hooks/use-document-title.js";
import { useNow } from "../hooks/use-now.js";
import { jobRole } from "../lib/domain/conversation-timeline.js";
import { formatWhen } from "../lib/format/format.js";
import { Link, useSearchParams } from "../router.js";

/** Characters of a message shown before "Show all". */
const PREVIEW_CHARS = 1200;

function SessionList({ sessions, current, now }: { sessions: HubSessionSummary[]; current: string | null; now: number }) {
  return (
    <nav aria-label="Conversation sessions">
      <ul className="conversation-sessions">
        {sessions.map((s) => (
          <li key={s.name}>
            <Link to={`/conversations?session=${encodeURIComponent(s.name)}`} aria-current={s.name === current ? "page" : undefined}>
              <strong className="mono truncate">{s.name}</strong>
              <span className="small">
                {s.online} of {s.agents} online · {s.messages} {s.messages === 1 ? "message" : "messages"}
                {s.lastMessageAt !== null && ` · ${formatWhen(s.lastMessageAt, now)}`}
              </span>
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function AgentChips({ agents }: { agents: HubAgent[] }) {
  const clients = agents.filter((a) => a.kind === "client");
  const workers = agents.filter((a) => a.kind === "worker");
  return (
    <>
      {clients.length ? (
        <ul className="conversation-agents" aria-label="Agents">
          {clients.map((a) => (
            <li key={a.name} className="conversation-agent">
              <span className="dot" style={{ color: a.online ? "var(--ok)" : "var(--muted)" }} aria-hidden="true" />
              <strong className="mono">{a.name}</strong>
              <span className={`badge ${a.online ? "ok" : "neutral"}`}>{a.online ? "online" : "offline"}</span>
              {a.label && <span className="small muted conversation-agent-label">{a.label}</span>}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted small">No agent has joined this session.</p>
      )}
      {workers.length > 0 && (
        <>
          <p className="small muted conversation-workers-head">Corral's agents answer in every session, each message as a job:</p>
          <ul className="conversation-workers" aria-label="Corral's agents">
            {workers.map((a) => (
              <li key={a.name} title={a.label ?? undefined}>
                <span className="dot" style={{ color: a.online ? "var(--ok)" : "var(--muted)" }} aria-hidden="true" />
                <span className="mono">{a.name}</span>
                {!a.online && <span className="small muted">unavailable</span>}
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function MessageText({ text }: { text: string }) {
  const [whole, setWhole] = useState(false);
  const long = text.length > PREVIEW_CHARS;
  return (
    <>
      <div className="message-text">{whole || !long ? text : `${text.slice(0, PREVIEW_CHARS)}…`}</div>
      {long && (
        <button type="button" className="link small" onClick={() => setWhole(!whole)}>
          {whole ? "Show less" : `Show all ${text.length.toLocaleString()} characters`}
        </button>
      )}
    </>
  );
}

function MessageItem({ message: m, agents, now }: { message: HubMessage; agents: HubAgent[]; now: number }) {
  const role = jobRole(m, agents);
  return (
    <li className={`conversation-message${role === "answer" ? " from-worker" : ""}`} data-message-id={m.id}>
      <div className="row small">
        <strong className="mono">{m.from}</strong>
        <span>→</span>
        <span className="mono">{m.to}</span>
        <When at={m.at} now={now} className="muted" />
        {m.jobId && (
          <Link to={`/jobs/${m.jobId}`} className="conversation-job">
            {role === "answer" ? "answer of job" : "ran as job"} <span className="mono">{m.jobId}</span>
          </Link>
        )}
      </div>
      <MessageText text={m.text} />
    </li>
  );
}

function SessionView({ session, now }: { session: string; now: number }) {
  const { agents, timeline } = useConversation(session);
  const list = agents.data ?? [];
  const held = timeline.data;
  return (
    <section className="stack conversation" aria-labelledby="conversation-title">
      <h2 id="conversation-title" style={{ margin: 0 }}>
        Session <span className="mono">{session}</span>
      </h2>
      <div className="card">
        <h3 style={{ marginTop: 0 }}>Agents</h3>
        {agents.isPending ? (
          <Loading what="the agents" />
        ) : agents.isError ? (
          <ErrorState error={agents.error} what="the agents" />
        ) : (
          <AgentChips agents={list} />
        )}
      </div>
      <div className="card">
        <h3 style={{ marginTop: 0 }}>Messages</h3>
        {held?.dropped ? <p className="small muted">{held.dropped.toLocaleString()} earlier messages are not shown here.</p> : null}
        <div role="log" aria-label={`Messages of ${session}`} aria-live="polite">
          {held?.messages.length ? (
            <ol className="conversation-timeline">
              {held.messages.map((m) => (
                <MessageItem key={m.id} message={m} agents={list} now={now} />
              ))}
            </ol>
          ) : (
            <p className="muted small">No messages yet. They appear here as the agents send them.</p>
          )}
        </div>
      </div>
    </section>
  );
}

/** Conversation sessions: who is in each, online or not, and their messages as they are sent. */
export function ConversationsPage() {
  useDocumentTitle("Conversations");
  const now = useNow(10_000);
  const [params, setParams] = useSearchParams();
  const sessions = useConversationSessions();
  const chosen = params.get("session");
  const first = sessions.data?.[0]?.name;
  // On a wide screen the first session opens by itself; the choice is kept in the URL.
  useEffect(() => {
    if (!chosen && first) setParams({ session: first });
  }, [chosen, first, setParams]);
  const current = chosen ?? first ?? null;
  return (
    <div>
      <div className="page-head">
        <h1>Conversations</h1>
      </div>
      {sessions.isPending ? (
        <Loading what="the conversations" />
      ) : sessions.isError ? (
        <ErrorState error={sessions.error} what="the conversations" onRetry={() => void sessions.refetch()} />
      ) : !sessions.data.length ? (
        <EmptyState title="No conversations yet">
          <p>
            Agents join a session with <code>corral_register</code> over MCP (on <code>/mcp?toolsets=hub</code>: the Connect page writes the command)
            or <code>POST /api/conversations/&lt;session&gt;/agents</code>, then send each other messages with <code>corral_send</code>. Their
            sessions appear here.
          </p>
        </EmptyState>
      ) : (
        <div className="conversations">
          <SessionList sessions={sessions.data} current={current} now={now} />
          {current && <SessionView key={current} session={current} now={now} />}
        </div>
      )}
    </div>
  );
}
