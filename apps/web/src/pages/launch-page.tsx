import type { AgentWithAvailability } from "@corral/shared";
import { useEffect, useMemo, useState, type FormEvent } from "react";
import { ApiRequestError } from "../api/client.js";
import { panelErrors, type PanelError } from "../lib/domain/api-errors.js";
import { useConnectInfo } from "../hooks/use-connect.js";
import { modelsForLaunch } from "../api/ollama.js";
import { ErrorActionView } from "../components/error-action.js";
import { describedBy, Field } from "../components/field.js";
import { ErrorState } from "../components/states.js";
import { useAgents, useListsOllamaModels } from "../hooks/use-agents.js";
import { useJobList, useJobSnapshot, useLaunchJob, useLaunchMany } from "../hooks/use-jobs.js";
import { useOllamaModels } from "../hooks/use-ollama.js";
import {
  agentsToTick,
  bodyFieldOf,
  eachAgentsDefault,
  emptyForm,
  type FormState,
  launchBody,
  launchManyBody,
  recallLaunch,
  rememberLaunch,
  sharingBlocked,
  hintAgent,
  workdirHint,
  worktreeBlocked,
  worktreeByDefault,
  worktreeChecked,
} from "../lib/domain/launch-form.js";
import { Link, navigate, useSearchParams } from "../router.js";

/**
 * The form's state: the inputs of the job it relaunches from, else the agent and workdir of the
 * last launch (if that agent is still enabled), else the first available agent. `defaulted`: the
 * agent is that first one, filled in without anyone choosing it (until the user picks one).
 */
function useLaunchForm(from: string | null, agents: AgentWithAvailability[] | undefined) {
  const [defaulted, setDefaulted] = useState(false);
  const [form, setForm] = useState<FormState>(() => ({ ...emptyForm, workdir: from ? "" : (recallLaunch(localStorage)?.workdir ?? "") }));
  const source = useJobSnapshot(from);
  useEffect(() => {
    const j = source.data;
    if (j)
      setForm({
        ...emptyForm,
        agent: j.agent,
        prompt: j.prompt,
        workdir: j.workdir,
        model: j.model ?? "",
        timeout: String(j.timeoutS),
        maxCost: j.limits.maxCostUsd === null ? "" : String(j.limits.maxCostUsd),
        maxTokens: j.limits.maxTokens === null ? "" : String(j.limits.maxTokens),
        session: j.followUpOf ?? "",
      });
  }, [source.data]);

  const enabledAgents = useMemo(() => agents?.filter((a) => a.enabled) ?? [], [agents]);
  useEffect(() => {
    if (!form.agent && !from && enabledAgents.length) {
      const remembered = enabledAgents.find((a) => a.name === recallLaunch(localStorage)?.agent);
      const first = remembered ?? enabledAgents.find((a) => a.availability.available) ?? enabledAgents[0];
      if (first) setForm((f) => ({ ...f, agent: first.name }));
      setDefaulted(!remembered);
    }
  }, [enabledAgents, form.agent, from]);
  return { form, setForm, continues: source.data?.followUpOf ?? null, defaulted, setDefaulted };
}

/** Workdirs to offer: the agent's default, then recent ones (its own first), then the allowed roots. */
function useWorkdirSuggestions(agent: AgentWithAvailability | undefined, agentName: string): string[] {
  const connect = useConnectInfo();
  const recent = useJobList({}, { limit: 100, offset: 0 });
  return useMemo(() => {
    const seen = new Set<string>();
    const out: string[] = [];
    const add = (p: string | undefined) => {
      if (p && !seen.has(p)) {
        seen.add(p);
        out.push(p);
      }
    };
    add(agent?.workdir);
    for (const j of recent.data?.jobs ?? []) if (!agentName || j.agent === agentName) add(j.workdir);
    for (const j of recent.data?.jobs ?? []) add(j.workdir);
    for (const root of connect.data?.workdirRoots ?? []) add(root);
    return out;
  }, [agent, recent.data, connect.data, agentName]);
}

/** Models to offer: an Ollama server's tool-capable models, else the agent's default and the ones used before. */
function useModelSuggestions(agent: AgentWithAvailability | undefined, agentName: string) {
  const recent = useJobList({}, { limit: 100, offset: 0 });
  const fromOllama = useListsOllamaModels()(agent);
  const ollama = useOllamaModels(agentName, { enabled: fromOllama, staleTime: 30_000 });
  const models = useMemo(() => {
    if (fromOllama && ollama.data) {
      return modelsForLaunch(ollama.data.models).map((m) => ({
        name: m.name,
        note: m.probe?.outcome === "calls_tools" ? "calls tools (probed)" : m.tools ? "tools" : "no tools",
      }));
    }
    const names = new Set<string>();
    if (agent?.effectiveModel) names.add(agent.effectiveModel);
    for (const j of recent.data?.jobs ?? []) if (j.agent === agentName && j.model) names.add(j.model);
    return [...names].map((name) => ({ name, note: name === agent?.effectiveModel ? "default" : "used before" }));
  }, [agent, fromOllama, ollama.data, recent.data, agentName]);
  const hint = fromOllama
    ? ollama.isError
      ? `Ollama models unavailable: ${ollama.error.message}`
      : "tool-capable models first"
    : agent?.effectiveModel
      ? `default ${agent.effectiveModel}`
      : "the CLI's default";
  return { models, hint };
}

type ErrorFor = (field: string) => string | undefined;
type Setter = (value: string | boolean) => void;
function AgentOptions({ agents }: { agents: AgentWithAvailability[] | undefined }) {
  const available = agents?.filter((a) => a.enabled && a.availability.available) ?? [];
  const missing = agents?.filter((a) => a.enabled && !a.availability.available) ?? [];
  const disabled = agents?.filter((a) => !a.enabled) ?? [];
  return (
    <>
      {available.map((a) => (
        <option key={a.name} value={a.name}>
          {a.name}
        </option>
      ))}
      {missing.length > 0 && (
        <optgroup label="Not available on this machine">
          {missing.map((a) => (
            <option key={a.name} value={a.name}>
              {a.name} (not available)
            </option>
          ))}
        </optgroup>
      )}
      {disabled.length > 0 && (
        <optgroup label="Disabled (enable on Agents)">
          {disabled.map((a) => (
            <option key={a.name} value={a.name} disabled>
              {a.name} (disabled)
            </option>
          ))}
        </optgroup>
      )}
    </>
  );
}

/** The agents one prompt goes to: every enabled one can be ticked, those missing on this machine say so. */
function AgentPicks(props: { agents: AgentWithAvailability[] | undefined; picked: string[]; onChange: (picked: string[]) => void; error?: string }) {
  const { agents, picked, onChange, error } = props;
  const enabled = agents?.filter((a) => a.enabled) ?? [];
  const toggle = (name: string, on: boolean) =>
    // Kept in the registry's order, so the jobs (and the Compare columns) come in a stable order.
    onChange(enabled.map((a) => a.name).filter((n) => (n === name ? on : picked.includes(n))));
  return (
    <div className="field">
      <fieldset className="agent-picks" aria-describedby={error ? "launch-agents-error" : undefined}>
        <legend>Agents</legend>
        {enabled.map((a) => (
          <label key={a.name} className="row check">
            <input type="checkbox" checked={picked.includes(a.name)} onChange={(e) => toggle(a.name, e.target.checked)} />
            <span>
              {a.name}
              {!a.availability.available && <span className="muted"> (not available)</span>}
            </span>
          </label>
        ))}
      </fieldset>
      {error && (
        <span className="error" id="launch-agents-error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

function AgentFields(props: {
  agents: AgentWithAvailability[] | undefined;
  agent: AgentWithAvailability | undefined;
  form: FormState;
  set: (key: keyof FormState) => Setter;
  setMany: (many: boolean) => void;
  setPicked: (picked: string[]) => void;
  errorFor: ErrorFor;
}) {
  const { agents, agent, form, set, setMany, setPicked, errorFor } = props;
  return (
    <div className="form-grid">
      <div className="stack field-with-check">
        {form.many ? (
          <AgentPicks agents={agents} picked={form.agents} onChange={setPicked} error={errorFor("agents")} />
        ) : (
          <AgentSelect agents={agents} agent={agent} form={form} set={set} errorFor={errorFor} />
        )}
        {!form.session && (
          <label className="row check">
            <input type="checkbox" checked={form.many} onChange={(e) => setMany(e.target.checked)} />
            <span>Several at once, compared side by side</span>
          </label>
        )}
      </div>
    </div>
  );
}

/** When the job is stopped: its timeout, a cost and a token limit (each the agent's default or none when empty). */
function LimitsFields({
  agents,
  agent,
  form,
  set,
  errorFor,
}: {
  agents: AgentWithAvailability[];
  agent: AgentWithAvailability | undefined;
  form: FormState;
  set: (key: keyof FormState) => Setter;
  errorFor: ErrorFor;
}) {
  const each = eachAgentsDefault(form, (name) => {
    const timeoutS = agents.find((a) => a.name === name)?.timeoutS;
    return timeoutS === undefined ? null : `${timeoutS}s`;
  });
  const hint = agent ? `default ${agent.timeoutS}s` : (each ?? undefined);
  return (
    <div className="form-grid">
      <Field id="launch-timeout" label="Timeout (seconds)" error={errorFor("timeoutS")} hint={hint}>
        <input
          id="launch-timeout"
          inputMode="numeric"
          value={form.timeout}
          placeholder={agent ? String(agent.timeoutS) : ""}
          onChange={(e) => set("timeout")(e.target.value)}
          {...describedBy("launch-timeout", errorFor("timeoutS"), Boolean(hint))}
        />
      </Field>
      <Field
        id="launch-max-cost"
        label="Cost limit ($)"
        error={errorFor("maxCostUsd")}
        hint="stops the job once it costs more; a model with no known price has no cost to stop it at, so limit its tokens"
      >
        <input
          id="launch-max-cost"
          inputMode="decimal"
          value={form.maxCost}
          placeholder="none"
          onChange={(e) => set("maxCost")(e.target.value)}
          {...describedBy("launch-max-cost", errorFor("maxCostUsd"), true)}
        />
      </Field>
      <Field id="launch-max-tokens" label="Token limit" error={errorFor("maxTokens")} hint="stops the job once its tokens in and out pass this">
        <input
          id="launch-max-tokens"
          inputMode="numeric"
          value={form.maxTokens}
          placeholder="none"
          onChange={(e) => set("maxTokens")(e.target.value)}
          {...describedBy("launch-max-tokens", errorFor("maxTokens"), true)}
        />
      </Field>
    </div>
  );
}

function AgentSelect(props: {
  agents: AgentWithAvailability[] | undefined;
  agent: AgentWithAvailability | undefined;
  form: FormState;
  set: (key: keyof FormState) => Setter;
  errorFor: ErrorFor;
}) {
  const { agents, agent, form, set, errorFor } = props;
  return (
    <Field id="launch-agent" label="Agent" error={errorFor("agent")} hint={agent ? agent.description || agent.kind : undefined}>
      <select
        id="launch-agent"
        value={form.agent}
        onChange={(e) => set("agent")(e.target.value)}
        {...describedBy("launch-agent", errorFor("agent"), Boolean(agent))}
      >
        {!form.agent && <option value="">Choose an agent</option>}
        <AgentOptions agents={agents} />
      </select>
    </Field>
  );
}

function WorkdirAndModelFields(props: {
  agents: AgentWithAvailability[];
  agent: AgentWithAvailability | undefined;
  form: FormState;
  set: (key: keyof FormState) => Setter;
  errorFor: ErrorFor;
  /** The job the server said uses the workdir: sharing with it is offered. */
  shareWith: string | null;
  setShared: (shared: boolean) => void;
}) {
  const { agents, agent, form, set, errorFor, shareWith, setShared } = props;
  const workdirs = useWorkdirSuggestions(agent, agent?.name ?? "");
  const many = form.many && form.agents.length > 1;
  const sharing = sharingBlocked(form, agents);
  const { models, hint: agentHint } = useModelSuggestions(agent, agent?.name ?? "");
  // Hints tell only of agents chosen: each one ticked, or none while none is.
  const hint = eachAgentsDefault(form, (name) => agents.find((a) => a.name === name)?.effectiveModel ?? null) ?? agentHint;
  return (
    <div className="form-grid">
      <div className="stack field-with-check">
        <Field id="launch-workdir" label="Workdir" error={errorFor("workdir")} hint={workdirHint(form, agents, many, agent?.workdir ?? null)}>
          <input
            id="launch-workdir"
            list="launch-workdirs"
            value={form.workdir}
            placeholder={many ? "" : (agent?.workdir ?? "")}
            onChange={(e) => set("workdir")(e.target.value)}
            {...describedBy("launch-workdir", errorFor("workdir"), true)}
          />
          <datalist id="launch-workdirs">
            {workdirs.map((w) => (
              <option key={w} value={w} />
            ))}
          </datalist>
        </Field>
        {many && (
          <label className="row check">
            <input type="checkbox" checked={form.sharedWorkdir} disabled={sharing !== null} onChange={(e) => setShared(e.target.checked)} />
            <span>
              One shared workdir: every agent writes in it, at once
              {sharing && <span className="muted small"> · {sharing}</span>}
            </span>
          </label>
        )}
        <WorktreeCheck agents={agents} form={form} many={many} set={set} error={errorFor("worktree")} />
        {worktreeChecked(form, agents) && (
          <Field id="launch-base" label="Base" error={errorFor("base")} hint="the branch, tag or commit it starts from (default: HEAD)">
            <input
              id="launch-base"
              value={form.base}
              placeholder="HEAD"
              onChange={(e) => set("base")(e.target.value)}
              {...describedBy("launch-base", errorFor("base"), true)}
            />
          </Field>
        )}
        {!many && shareWith && (
          <label className="row check">
            <input type="checkbox" checked={form.sharedWorkdir} disabled={sharing !== null} onChange={(e) => setShared(e.target.checked)} />
            <span>
              Share the workdir with the running job (<Link to={`/jobs/${shareWith}`}>{shareWith}</Link>): both write there at once
              {sharing && <span className="muted small"> · {sharing}</span>}
            </span>
          </label>
        )}
      </div>
      <Field id="launch-model" label="Model" error={errorFor("model")} hint={hint}>
        <input
          id="launch-model"
          list="launch-models"
          value={form.model}
          placeholder={agent?.effectiveModel ?? ""}
          onChange={(e) => set("model")(e.target.value)}
          {...describedBy("launch-model", errorFor("model"), true)}
        />
        <datalist id="launch-models">
          {models.map((m) => (
            <option key={m.name} value={m.name}>
              {m.note}
            </option>
          ))}
        </datalist>
      </Field>
    </div>
  );
}

/** The worktree box: the agents' default until ticked or unticked, which it names. */
function WorktreeCheck(props: {
  agents: AgentWithAvailability[];
  form: FormState;
  many: boolean;
  set: (key: keyof FormState) => Setter;
  error?: string;
}) {
  const { agents, form, many, set, error } = props;
  const byDefault = worktreeByDefault(form, agents);
  const blocked = worktreeBlocked(form);
  return (
    <div className="field">
      <label className="row check">
        <input
          type="checkbox"
          checked={worktreeChecked(form, agents)}
          disabled={blocked !== null}
          onChange={(e) => set("worktree")(e.target.checked)}
          aria-describedby={error ? "launch-worktree-error" : undefined}
        />
        <span>
          In a git worktree of its repository, on a branch of its own{many ? " (one per agent)" : ""}: review, merge or discard it after
          {byDefault.length > 0 && <span className="muted small"> · {byDefault.join(", ")}: on by default</span>}
          {blocked && <span className="muted small"> · {blocked}</span>}
        </span>
      </label>
      {error && (
        <span className="error" id="launch-worktree-error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

/** The form's errors: the schema's before sending, the server's after; each goes once its field changes. */
function useLaunchErrors() {
  const [errors, setErrors] = useState<PanelError[]>([]);
  const [shareWith, setShareWith] = useState<string | null>(null);
  const errorFor: ErrorFor = (field) => errors.find((e) => e.field === field)?.text;
  const clear = (key: keyof FormState) =>
    // A field-less error (a budget) is about the agent: choosing another one answers it.
    setErrors((all) => all.filter((e) => e.field !== bodyFieldOf[key] && !(key === "agent" && e.field === null)));
  const fromServer = (err: Error) => {
    const found = (err instanceof ApiRequestError ? panelErrors(err) : [{ field: null, text: err.message }]).map((e) =>
      // A launch to several agents names the one at fault by its place (agents.1): shown under the agents.
      e.field?.startsWith("agents.") ? { ...e, field: "agents" } : e,
    );
    const share = found.find((e) => e.action?.kind === "share-workdir")?.action;
    if (share?.kind === "share-workdir") setShareWith(share.jobId);
    setErrors(found);
  };
  const fromForm = (fields: Record<string, string>) => setErrors(Object.entries(fields).map(([field, text]) => ({ field, text })));
  // Errors not shown under a field of this form (a budget, a full queue, a field it does not have).
  const unplaced = errors.filter((e) => e.field === null || !Object.values(bodyFieldOf).includes(e.field));
  return { errorFor, clear, fromServer, fromForm, unplaced, shareWith };
}

export function LaunchPage() {
  const [params] = useSearchParams();
  const from = params.get("from");
  const agents = useAgents();
  const launch = useLaunchJob();
  const launchMany = useLaunchMany();
  const { form, setForm, continues, defaulted, setDefaulted } = useLaunchForm(from, agents.data);
  const errors = useLaunchErrors();
  // The agent the hints and placeholders speak of: none while several (or none) are ticked.
  const agent = agents.data?.find((a) => a.name === hintAgent(form));
  const set = (key: keyof FormState) => (value: string | boolean) => {
    setForm((f) => ({ ...f, [key]: value }));
    if (key === "agent") setDefaulted(false);
    errors.clear(key);
  };
  const setMany = (many: boolean) => {
    const enabled = agents.data?.filter((a) => a.enabled).map((a) => a.name) ?? [];
    const remembered = recallLaunch(localStorage)?.agents;
    // The shared workdir of several agents is not the one job's: it goes with the switch.
    setForm((f) => ({
      ...f,
      many,
      agents: many ? agentsToTick(defaulted ? null : f.agent, remembered, enabled) : f.agents,
      agent: many ? f.agent : (f.agents[0] ?? f.agent),
      sharedWorkdir: false,
    }));
    errors.clear("agents");
    errors.clear("agent");
  };
  const setPicked = (picked: string[]) => {
    // Down to one agent, the shared workdir box goes, and with it what it said.
    setForm((f) => ({ ...f, agents: picked, agent: picked[0] ?? f.agent, sharedWorkdir: picked.length > 1 && f.sharedWorkdir }));
    if (picked.length) setDefaulted(false);
    errors.clear("agents");
  };
  const setShared = (shared: boolean) => {
    setForm((f) => ({ ...f, sharedWorkdir: shared }));
    if (shared) errors.clear("sharedWorkdir");
  };

  const toMany = form.many && form.agents.length > 1;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (form.many && form.agents.length === 0) return errors.fromForm({ agents: "tick at least one agent" });
    if (toMany) {
      const group = launchManyBody(form, agents.data);
      if ("errors" in group) return errors.fromForm(group.errors);
      errors.fromForm({});
      launchMany.mutate(group.body, {
        onSuccess: ({ jobs }) => {
          rememberLaunch(localStorage, { agent: form.agents[0] ?? form.agent, workdir: form.workdir.trim(), agents: form.agents });
          navigate(`/compare?jobs=${jobs.map((j) => j.id).join(",")}`);
        },
        onError: errors.fromServer,
      });
      return;
    }
    // One agent ticked is an ordinary launch of that agent.
    // Opened with a job's inputs (Edit and relaunch), the job launched records that it ran that one again.
    const built = launchBody(form.many ? { ...form, agent: form.agents[0] ?? form.agent } : form, agents.data, from ?? undefined);
    if ("errors" in built) return errors.fromForm(built.errors);
    errors.fromForm({});
    launch.mutate(built.body, {
      onSuccess: (job) => {
        rememberLaunch(localStorage, { agent: form.agent, workdir: form.workdir.trim() });
        navigate(`/jobs/${job.id}`);
      },
      onError: errors.fromServer,
    });
  };

  if (agents.isError) return <ErrorState error={agents.error} what="agents" onRetry={() => void agents.refetch()} />;

  return (
    <>
      <div className="page-head">
        <h1>Launch a job</h1>
        {from && (
          <span className="muted small">
            Inputs of <Link to={`/jobs/${from}`}>{from}</Link>
          </span>
        )}
      </div>
      <form className="card stack" onSubmit={submit} noValidate aria-label="Launch a job">
        <AgentFields agents={agents.data} agent={agent} form={form} set={set} setMany={setMany} setPicked={setPicked} errorFor={errors.errorFor} />
        {!form.many && agent && !agent.availability.available && (
          <div className="alert warn" role="status">
            <strong>{agent.name} is not available on this machine, so its jobs fail.</strong>
            <p>{agent.availability.hint}</p>
          </div>
        )}
        <Field id="launch-prompt" label="Prompt" error={errors.errorFor("prompt")} hint="Ctrl+Enter launches">
          <textarea
            id="launch-prompt"
            rows={8}
            value={form.prompt}
            onChange={(e) => set("prompt")(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit(e);
            }}
            placeholder="The task, as you would type it to that CLI"
            {...describedBy("launch-prompt", errors.errorFor("prompt"), true)}
          />
        </Field>
        <WorkdirAndModelFields
          agents={agents.data ?? []}
          agent={agent}
          form={form}
          set={set}
          errorFor={errors.errorFor}
          shareWith={errors.shareWith}
          setShared={setShared}
        />
        <LimitsFields agents={agents.data ?? []} agent={agent} form={form} set={set} errorFor={errors.errorFor} />
        {continues && (
          // The job relaunched was a follow-up: it continues the same earlier turn unless unticked.
          <div className="field">
            <label className="row check">
              <input type="checkbox" checked={form.session !== ""} onChange={(e) => set("session")(e.target.checked ? continues : "")} />
              <span>
                Continue the conversation of job <Link to={`/jobs/${continues}`}>{continues}</Link> (untick to start a new one)
              </span>
            </label>
            {errors.errorFor("session") && (
              <span className="error" role="alert">
                {errors.errorFor("session")}
              </span>
            )}
          </div>
        )}
        {errors.unplaced.map((e) => (
          <div className="alert" role="alert" key={e.text}>
            <strong>The server refused this job.</strong>
            <p>{e.text}</p>
            {e.action && (
              <p>
                <ErrorActionView action={e.action} onEnabled={() => errors.clear("agent")} />
              </p>
            )}
          </div>
        ))}
        <div className="row">
          <button
            type="submit"
            className="primary"
            disabled={launch.isPending || launchMany.isPending || (form.many ? !form.agents.length : !form.agent)}
          >
            {launch.isPending || launchMany.isPending ? "Launching…" : toMany ? `Launch on ${form.agents.length} agents` : "Launch"}
          </button>
          <span className="muted small">
            {toMany
              ? "The jobs open side by side as soon as they are queued, live while they run."
              : "The job opens as soon as it is queued, with its live output."}
          </span>
        </div>
      </form>
    </>
  );
}
