import type { AgentWithAvailability } from "@corral/shared";
import { useEffect, useMemo, useState, type FormEvent } from "react";
import { ApiRequestError } from "../api/client.js";
import { useConnectInfo } from "../hooks/use-connect.js";
import { modelsForLaunch } from "../api/ollama.js";
import { describedBy, Field } from "../components/field.js";
import { ErrorState } from "../components/states.js";
import { useAgents } from "../hooks/use-agents.js";
import { useJobList, useJobSnapshot, useLaunchJob } from "../hooks/use-jobs.js";
import { useOllamaModels } from "../hooks/use-ollama.js";
import { emptyForm, type FormState, launchBody } from "../lib/domain/launch-form.js";
import { Link, navigate, useSearchParams } from "../router.js";

/** The form's state: the inputs of the job it relaunches from, else the first available agent. */
function useLaunchForm(from: string | null, agents: AgentWithAvailability[] | undefined) {
  const [form, setForm] = useState<FormState>(emptyForm);
  const source = useJobSnapshot(from);
  useEffect(() => {
    const j = source.data;
    if (j) setForm({ agent: j.agent, prompt: j.prompt, workdir: j.workdir, model: j.model ?? "", timeout: String(j.timeoutS) });
  }, [source.data]);

  const enabledAgents = useMemo(() => agents?.filter((a) => a.enabled) ?? [], [agents]);
  useEffect(() => {
    if (!form.agent && !from && enabledAgents.length) {
      const first = enabledAgents.find((a) => a.availability.available) ?? enabledAgents[0];
      if (first) setForm((f) => ({ ...f, agent: first.name }));
    }
  }, [enabledAgents, form.agent, from]);
  const set = (key: keyof FormState) => (value: string) => setForm((f) => ({ ...f, [key]: value }));
  return { form, set };
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
  const ollama = useOllamaModels(agentName, { enabled: agent?.kind === "ollama", staleTime: 30_000 });
  const models = useMemo(() => {
    if (agent?.kind === "ollama" && ollama.data) {
      return modelsForLaunch(ollama.data.models).map((m) => ({
        name: m.name,
        note: m.probe?.outcome === "calls_tools" ? "calls tools (probed)" : m.tools ? "tools" : "no tools",
      }));
    }
    const names = new Set<string>();
    if (agent?.effectiveModel) names.add(agent.effectiveModel);
    for (const j of recent.data?.jobs ?? []) if (j.agent === agentName && j.model) names.add(j.model);
    return [...names].map((name) => ({ name, note: name === agent?.effectiveModel ? "default" : "used before" }));
  }, [agent, ollama.data, recent.data, agentName]);
  const hint =
    agent?.kind === "ollama"
      ? ollama.isError
        ? `Ollama models unavailable: ${ollama.error.message}`
        : "tool-capable models first"
      : agent?.effectiveModel
        ? `default ${agent.effectiveModel}`
        : "the CLI's default";
  return { models, hint };
}

type ErrorFor = (field: string) => string | undefined;
type Setter = (value: string) => void;

function AgentAndTimeoutFields(props: {
  agents: AgentWithAvailability[] | undefined;
  agent: AgentWithAvailability | undefined;
  form: FormState;
  set: (key: keyof FormState) => Setter;
  errorFor: ErrorFor;
}) {
  const { agents, agent, form, set, errorFor } = props;
  return (
    <div className="form-grid">
      <Field id="launch-agent" label="Agent" error={errorFor("agent")} hint={agent ? agent.description || agent.kind : undefined}>
        <select
          id="launch-agent"
          value={form.agent}
          onChange={(e) => set("agent")(e.target.value)}
          {...describedBy("launch-agent", errorFor("agent"), Boolean(agent))}
        >
          {!form.agent && <option value="">Choose an agent</option>}
          {agents?.map((a) => (
            <option key={a.name} value={a.name} disabled={!a.enabled}>
              {a.name}
              {!a.enabled ? " (disabled)" : !a.availability.available ? " (not available)" : ""}
            </option>
          ))}
        </select>
      </Field>
      <Field id="launch-timeout" label="Timeout (seconds)" error={errorFor("timeoutS")} hint={agent ? `default ${agent.timeoutS}s` : undefined}>
        <input
          id="launch-timeout"
          inputMode="numeric"
          value={form.timeout}
          placeholder={agent ? String(agent.timeoutS) : ""}
          onChange={(e) => set("timeout")(e.target.value)}
          {...describedBy("launch-timeout", errorFor("timeoutS"), Boolean(agent))}
        />
      </Field>
    </div>
  );
}

function WorkdirAndModelFields(props: {
  agent: AgentWithAvailability | undefined;
  form: FormState;
  set: (key: keyof FormState) => Setter;
  errorFor: ErrorFor;
}) {
  const { agent, form, set, errorFor } = props;
  const workdirs = useWorkdirSuggestions(agent, form.agent);
  const { models, hint } = useModelSuggestions(agent, form.agent);
  return (
    <div className="form-grid">
      <Field
        id="launch-workdir"
        label="Workdir"
        error={errorFor("workdir")}
        hint={agent ? `default ${agent.workdir}` : "Recent and allowed directories are offered"}
      >
        <input
          id="launch-workdir"
          list="launch-workdirs"
          value={form.workdir}
          placeholder={agent?.workdir ?? ""}
          onChange={(e) => set("workdir")(e.target.value)}
          {...describedBy("launch-workdir", errorFor("workdir"), true)}
        />
        <datalist id="launch-workdirs">
          {workdirs.map((w) => (
            <option key={w} value={w} />
          ))}
        </datalist>
      </Field>
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

export function LaunchPage() {
  const [params] = useSearchParams();
  const from = params.get("from");
  const agents = useAgents();
  const launch = useLaunchJob();
  const { form, set } = useLaunchForm(from, agents.data);
  const [localError, setLocalError] = useState<{ field: string; message: string } | null>(null);
  const agent = agents.data?.find((a) => a.name === form.agent);

  const serverError = launch.error instanceof ApiRequestError ? launch.error : null;
  const errorFor = (field: string) => (localError?.field === field ? localError.message : serverError?.messageFor(field));
  const fieldNames = ["agent", "prompt", "workdir", "model", "timeoutS"];
  const unplaced = launch.error && !fieldNames.some((f) => errorFor(f)) ? launch.error.message : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const built = launchBody(form);
    if ("field" in built) {
      setLocalError(built);
      return;
    }
    setLocalError(null);
    launch.mutate(built.body, { onSuccess: (job) => navigate(`/jobs/${job.id}`) });
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
        <AgentAndTimeoutFields agents={agents.data} agent={agent} form={form} set={set} errorFor={errorFor} />
        {agent && !agent.availability.available && (
          <div className="alert warn" role="status">
            <strong>{agent.name} is not available on this machine.</strong>
            <p>{agent.availability.hint}</p>
          </div>
        )}
        <Field id="launch-prompt" label="Prompt" error={errorFor("prompt")} hint="Ctrl+Enter launches">
          <textarea
            id="launch-prompt"
            rows={8}
            value={form.prompt}
            onChange={(e) => set("prompt")(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit(e);
            }}
            placeholder="The task, as you would type it to that CLI"
            {...describedBy("launch-prompt", errorFor("prompt"), true)}
          />
        </Field>
        <WorkdirAndModelFields agent={agent} form={form} set={set} errorFor={errorFor} />
        {unplaced && (
          <div className="alert" role="alert">
            <strong>The server refused this job.</strong>
            <p>{unplaced}</p>
          </div>
        )}
        <div className="row">
          <button type="submit" className="primary" disabled={launch.isPending || !form.agent}>
            {launch.isPending ? "Launching…" : "Launch"}
          </button>
          <span className="muted small">The job opens as soon as it is queued, with its live output.</span>
        </div>
      </form>
    </>
  );
}
