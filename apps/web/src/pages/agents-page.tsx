import type { AgentWithAvailability } from "@corral/shared";
import { useEffect, useRef, useState } from "react";
import { AgentForm } from "../components/agent-form.js";
import { EmptyState, ErrorState, Loading } from "../components/states.js";
import { useAgentMutations, useAgents } from "../hooks/use-agents.js";
import { createCommandBody, formFromAgent, newCommandAgentForm, updateBody } from "../lib/domain/agent-form.js";
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

export function AgentsPage() {
  const agents = useAgents();
  const { create, update, remove } = useAgentMutations();
  const [editing, setEditing] = useState<AgentWithAvailability | null>(null);
  const [adding, setAdding] = useState(false);
  const [toggleError, setToggleError] = useState<string | null>(null);

  return (
    <>
      <div className="page-head">
        <h1>Agents</h1>
        <button type="button" className="primary" onClick={() => setAdding(true)}>
          Add a command agent
        </button>
      </div>
      <p className="muted small">
        Each enabled agent is a set of MCP tools (<code>&lt;name&gt;_run</code>, <code>_run_async</code>, <code>_done</code>). See{" "}
        <Link to="/connect">Connect</Link> to add them to Claude Code.
      </p>
      {toggleError && (
        <div className="alert" role="alert">
          {toggleError}
        </div>
      )}
      {agents.isError ? (
        <ErrorState error={agents.error} what="agents" onRetry={() => void agents.refetch()} />
      ) : agents.isPending ? (
        <Loading what="agents" />
      ) : agents.data.length === 0 ? (
        <EmptyState title="No agents">Add a command agent to run any executable as a worker.</EmptyState>
      ) : (
        <div className="table-wrap">
          <table aria-label="Agents">
            <thead>
              <tr>
                <th>Agent</th>
                <th>Availability</th>
                <th className="hide-narrow">Defaults</th>
                <th>Enabled</th>
                <th>
                  <span className="hide-narrow">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {agents.data.map((a) => (
                <tr key={a.name}>
                  <td>
                    <strong className="mono">{a.name}</strong> <span className="badge neutral">{a.kind}</span>
                    <div className="small muted">{a.description}</div>
                  </td>
                  <td>
                    <Availability agent={a} />
                  </td>
                  <td className="hide-narrow small">
                    <div>
                      model <span className="mono">{a.effectiveModel ?? "CLI default"}</span>
                    </div>
                    <div>
                      workdir <span className="mono">{a.workdir}</span>
                    </div>
                    <div>
                      timeout {a.timeoutS}s · {a.maxConcurrent} at once · {a.provider}
                    </div>
                  </td>
                  <td>
                    <label className="row" style={{ fontWeight: 400 }}>
                      <input
                        type="checkbox"
                        checked={a.enabled}
                        disabled={update.isPending}
                        onChange={(e) =>
                          update.mutate(
                            { name: a.name, body: { enabled: e.target.checked } },
                            { onError: (err) => setToggleError(err.message), onSuccess: () => setToggleError(null) },
                          )
                        }
                        aria-label={`${a.name} enabled`}
                      />
                      <span className="small">{a.enabled ? "on" : "off"}</span>
                    </label>
                  </td>
                  <td>
                    <div className="row">
                      <button type="button" className="small" onClick={() => setEditing(a)} aria-label={`Edit ${a.name}`}>
                        Edit
                      </button>
                      {!a.builtin && (
                        <button
                          type="button"
                          className="small danger"
                          onClick={() => {
                            if (window.confirm(`Delete agent ${a.name}?`)) {
                              remove.mutate(a.name, { onError: (err) => setToggleError(err.message) });
                            }
                          }}
                          aria-label={`Delete ${a.name}`}
                        >
                          Delete
                        </button>
                      )}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Modal open={editing !== null} title={`Edit ${editing?.name ?? ""}`} onClose={() => setEditing(null)}>
        {editing && (
          <AgentForm
            initial={formFromAgent(editing)}
            kind={editing.kind}
            isNew={false}
            toBody={(f) => updateBody(f, editing.kind)}
            save={(body) => update.mutateAsync({ name: editing.name, body })}
            onDone={() => setEditing(null)}
            submitLabel="Save"
          />
        )}
      </Modal>
      <Modal open={adding} title="Add a command agent" onClose={() => setAdding(false)}>
        <p className="small muted" style={{ marginTop: 0 }}>
          Any executable becomes a worker: it runs in the job's workdir with the prompt in its arguments.
        </p>
        <AgentForm
          initial={newCommandAgentForm()}
          kind="command"
          isNew
          toBody={createCommandBody}
          save={(body) => create.mutateAsync(body)}
          onDone={() => setAdding(false)}
          submitLabel="Add agent"
        />
      </Modal>
    </>
  );
}
