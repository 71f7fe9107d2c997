import type { AgentKindDescriptor, AgentWithAvailability, ConfigFileError, ConfigFileStatus, UpdateAgentBody } from "@corral/shared";
import { useEffect, useRef, useState } from "react";
import { ApiRequestError } from "../api/client.js";
import { AgentForm } from "../components/agent-form.js";
import { panelErrors, type PanelError } from "../lib/domain/api-errors.js";
import { EmptyState, ErrorState, Loading } from "../components/states.js";
import { useAgentKinds, useAgentMutations, useAgents } from "../hooks/use-agents.js";
import { configFileApi } from "../api/config-file.js";
import { useConfigFile } from "../hooks/use-config-file.js";
import { createBody, formFromAgent, newAgentForm, updateBody } from "../lib/domain/agent-form.js";
import { agentLimits } from "../lib/domain/agent-summary.js";
import { Link } from "../router.js";

function Availability({ agent }: { agent: AgentWithAvailability }) {
  const a = agent.availability;
  return a.available ? (
    <div>
      <span className="badge ok">available</span>
      {a.version && (
        <span className="small muted mono" title={`${a.resolved ?? agent.name} --version`} style={{ marginLeft: "0.4rem" }}>
          {a.version}
        </span>
      )}
      {a.resolved && (
        <div className="small muted mono truncate" title={a.resolved} style={{ maxWidth: 260 }}>
          {a.resolved}
        </div>
      )}
    </div>
  ) : (
    <div>
      <span className="badge bad">not available</span>
      {a.hint && (
        <div className="small muted" style={{ maxWidth: 320 }}>
          {a.hint}
        </div>
      )}
    </div>
  );
}

/** A modal the browser manages (focus trap, Escape), opened while `open` is true. */
function Modal({ open, title, onClose, children }: { open: boolean; title: string; onClose: () => void; children: React.ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal?.();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} onClose={onClose} aria-labelledby="modal-title">
      <h2 id="modal-title" style={{ marginTop: 0 }}>
        {title}
      </h2>
      {open && children}
    </dialog>
  );
}

interface RowActions {
  busy: boolean;
  /** Where the file's agents are edited. */
  configPath: string;
  onToggle: (agent: AgentWithAvailability, enabled: boolean) => void;
  onEdit: (agent: AgentWithAvailability) => void;
  onDelete: (agent: AgentWithAvailability) => void;
}

function AgentRow({ agent: a, actions }: { agent: AgentWithAvailability; actions: RowActions }) {
  return (
    <tr>
      <td>
        <strong className="mono">{a.name}</strong> <span className="badge neutral">{a.kind}</span>
        {a.source === "file" && <span className="badge info">from file</span>}
        <div className="small muted">{a.description}</div>
      </td>
      <td data-label="Availability">
        <Availability agent={a} />
      </td>
      <td data-label="Defaults" className="small wide">
        <div>
          <div>
            model <span className="mono">{a.effectiveModel ?? "CLI default"}</span>
          </div>
          <div>
            workdir <span className="mono">{a.workdir}</span>
          </div>
          <div title={a.worktree ? "Each job runs in a git worktree of its own unless its launch says otherwise" : undefined}>{agentLimits(a)}</div>
        </div>
      </td>
      <td data-label="Enabled">
        <label className="row" style={{ fontWeight: 400 }}>
          <input
            type="checkbox"
            checked={a.enabled}
            disabled={actions.busy || a.source === "file"}
            onChange={(e) => actions.onToggle(a, e.target.checked)}
            aria-label={`${a.name} enabled`}
          />
          <span className="small">{a.enabled ? "on" : "off"}</span>
        </label>
      </td>
      <td>
        {a.source === "file" ? (
          <div className="small muted">
            Edit it in <span className="mono break-anywhere">{actions.configPath}</span>
          </div>
        ) : (
          <div className="row">
            <button type="button" className="small" onClick={() => actions.onEdit(a)} aria-label={`Edit ${a.name}`}>
              Edit
            </button>
            {!a.builtin && (
              <button type="button" className="small danger" onClick={() => actions.onDelete(a)} aria-label={`Delete ${a.name}`}>
                Delete
              </button>
            )}
          </div>
        )}
      </td>
    </tr>
  );
}

function AgentTable({ agents, actions }: { agents: AgentWithAvailability[]; actions: RowActions }) {
  return (
    <div className="table-wrap">
      <table aria-label="Agents" className="cards">
        <thead>
          <tr>
            <th>Agent</th>
            <th>Availability</th>
            <th>Defaults</th>
            <th>Enabled</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {agents.map((a) => (
            <AgentRow key={a.name} agent={a} actions={actions} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Where in the file an error is: line, column, field. */
const whereOf = (error: ConfigFileError) =>
  [error.line !== null && `line ${error.line}`, error.column !== null && `column ${error.column}`, error.field && `at ${error.field}`]
    .filter(Boolean)
    .join(", ");

/**
 * The config file's refusal: every error in it and where, and that its last good agents still run;
 * or, with no file, the one in the folder Corral started from that a user may have meant.
 */
function ConfigFileBanner({ status }: { status: ConfigFileStatus }) {
  if (status.hint) {
    return (
      <div className="alert warn" role="status" aria-label="Config file not found">
        <p className="break-anywhere">{status.hint}</p>
      </div>
    );
  }
  if (status.state !== "error" || status.errors.length === 0) return null;
  const count = status.errors.length;
  return (
    <div className="alert" role="alert" aria-label="Config file refused">
      <strong>
        The config file <span className="mono break-anywhere">{status.path}</span> was not loaded
        {count > 1 ? `: ${count} errors` : ""}
      </strong>
      <ul>
        {status.errors.map((error, i) => (
          // Errors have no id; a report is never reordered.
          <li key={i}>
            {whereOf(error) && <span className="mono">{whereOf(error)}: </span>}
            {error.message}
          </li>
        ))}
      </ul>
      <p className="small">
        {status.agents.length
          ? `Its last good version's agents (${status.agents.join(", ")}) keep running. Fix the file and save it: Corral reads it again.`
          : "Fix the file and save it: Corral reads it again."}
      </p>
    </div>
  );
}

/** The kinds the page offers an Add dialog for; its main one last, where the primary button sits. */
function addableKinds(kinds: AgentKindDescriptor[] | undefined): AgentKindDescriptor[] {
  const addable = (kinds ?? []).filter((k) => k.adding !== null);
  return [...addable.filter((k) => !k.adding?.primary), ...addable.filter((k) => k.adding?.primary)];
}

function AddAgentModal({ kind, onClose }: { kind: AgentKindDescriptor | null; onClose: () => void }) {
  const { create } = useAgentMutations();
  return (
    <Modal open={kind !== null} title={kind?.adding?.title ?? ""} onClose={onClose}>
      {kind && (
        <>
          <p className="small muted" style={{ marginTop: 0 }}>
            {kind.adding?.intro}
          </p>
          <AgentForm
            key={kind.kind}
            initial={newAgentForm(kind)}
            kind={kind}
            isNew
            toBody={(form) => createBody(form, kind)}
            save={(body) => create.mutateAsync(body)}
            onDone={onClose}
            submitLabel="Add agent"
          />
        </>
      )}
    </Modal>
  );
}

/** `save` is the page's own update, so the row toggles wait while an edit is being saved. */
function EditAgentModal({
  agent,
  kinds,
  save,
  onClose,
}: {
  agent: AgentWithAvailability | null;
  kinds: AgentKindDescriptor[] | undefined;
  save: (name: string, body: UpdateAgentBody) => Promise<unknown>;
  onClose: () => void;
}) {
  const kind = kinds?.find((k) => k.kind === agent?.kind);
  return (
    <Modal open={agent !== null} title={`Edit ${agent?.name ?? ""}`} onClose={onClose}>
      {agent &&
        (kind ? (
          <AgentForm
            initial={formFromAgent(agent, kind)}
            kind={kind}
            isNew={false}
            toBody={(f) => updateBody(f, kind)}
            save={(body) => save(agent.name, body)}
            onDone={onClose}
            submitLabel="Save"
          />
        ) : (
          <div className="stack">
            <div className="alert" role="alert">
              {kinds
                ? `This server runs no ${agent.kind} agents any more, so their settings cannot be edited here; delete the agent, or run a server that knows the kind.`
                : "Loading the agent's settings…"}
            </div>
            <div className="row">
              <button type="button" onClick={onClose}>
                Cancel
              </button>
            </div>
          </div>
        ))}
    </Modal>
  );
}

export function AgentsPage() {
  const agents = useAgents();
  const kinds = useAgentKinds();
  const configFile = useConfigFile();
  const { update, remove } = useAgentMutations();
  const [editing, setEditing] = useState<AgentWithAvailability | null>(null);
  const [adding, setAdding] = useState<AgentKindDescriptor | null>(null);
  const [rowError, setRowError] = useState<PanelError | null>(null);
  const failed = (err: Error) => setRowError(err instanceof ApiRequestError ? (panelErrors(err)[0] ?? null) : { field: null, text: err.message });
  const toggle = (name: string, enabled: boolean) =>
    update.mutate({ name, body: { enabled } }, { onError: failed, onSuccess: () => setRowError(null) });
  const actions: RowActions = {
    busy: update.isPending,
    configPath: configFile.data?.path ?? "the config file",
    onToggle: (a, enabled) => toggle(a.name, enabled),
    onEdit: setEditing,
    onDelete: (a) => {
      if (window.confirm(`Delete agent ${a.name}?`)) remove.mutate(a.name, { onError: failed, onSuccess: () => setRowError(null) });
    },
  };
  const disable = rowError?.action?.kind === "disable-agent" ? rowError.action.agent : null;

  return (
    <>
      <div className="page-head">
        <h1>Agents</h1>
        <div className="row">
          <a className="button" href={configFileApi.exportUrl} download="corral.yaml">
            Export as corral.yaml
          </a>
          {addableKinds(kinds.data).map((k) => (
            <button key={k.kind} type="button" className={k.adding?.primary ? "primary" : undefined} onClick={() => setAdding(k)}>
              {k.adding?.title}
            </button>
          ))}
        </div>
      </div>
      <p className="muted small">
        Each enabled agent is a set of MCP tools (<code>&lt;name&gt;_run</code>, <code>_run_async</code>, <code>_done</code>). See{" "}
        <Link to="/connect">Connect</Link> to add them to Claude Code. Agents can also be declared in a config file
        {configFile.data && (
          <>
            {" "}
            (<span className="mono break-anywhere">{configFile.data.path}</span>)
          </>
        )}
        ; the export writes the agents, budgets and prices as one, without keys.
      </p>
      {kinds.isError && (
        <ErrorState error={kinds.error} what="the agent kinds, so no agent can be added or edited" onRetry={() => void kinds.refetch()} />
      )}
      {configFile.data && <ConfigFileBanner status={configFile.data} />}
      {rowError && (
        <div className="alert" role="alert">
          <p>{rowError.text}</p>
          {disable && (
            <p>
              <button type="button" className="small" disabled={update.isPending} onClick={() => toggle(disable, false)}>
                Disable {disable}
              </button>
            </p>
          )}
        </div>
      )}
      {agents.isError ? (
        <ErrorState error={agents.error} what="agents" onRetry={() => void agents.refetch()} />
      ) : agents.isPending ? (
        <Loading what="agents" />
      ) : agents.data.length === 0 ? (
        <EmptyState title="No agents">Add one with the buttons above: each agent becomes a set of MCP tools.</EmptyState>
      ) : (
        <AgentTable agents={agents.data} actions={actions} />
      )}
      <EditAgentModal agent={editing} kinds={kinds.data} save={(name, body) => update.mutateAsync({ name, body })} onClose={() => setEditing(null)} />
      <AddAgentModal kind={adding} onClose={() => setAdding(null)} />
    </>
  );
}
