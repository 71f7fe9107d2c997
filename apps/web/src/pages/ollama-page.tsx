import type { OllamaModel, ProbeOutcome } from "@corral/shared";
import { useState } from "react";
import { ApiRequestError } from "../api/client.js";
import { EmptyState, Loading } from "../components/states.js";
import { When } from "../components/when.js";
import { useAgents, useListsOllamaModels } from "../hooks/use-agents.js";
import { useNow } from "../hooks/use-now.js";
import { formatBytes, plural } from "../lib/format/format.js";
import { canProbe } from "../api/ollama.js";
import { probeAllText, type ProbeAllRun } from "../lib/domain/probe-all.js";
import { useOllamaLastKnown, useOllamaModels, useProbeAll, useProbeModel } from "../hooks/use-ollama.js";

const capabilityTone: Record<string, string> = { tools: "ok", vision: "info", thinking: "info", embedding: "warn", completion: "neutral" };

const probeText: Record<ProbeOutcome, { label: string; tone: string }> = {
  calls_tools: { label: "calls tools", tone: "ok" },
  text_tool_call: { label: "writes calls as text", tone: "warn" },
  no_tool_call: { label: "did not call the tool", tone: "warn" },
  no_tools_support: { label: "no tool support", tone: "bad" },
  error: { label: "probe failed", tone: "bad" },
};

/**
 * One model; `offline` (a last known listing) shows what was seen, with nothing to ask the server.
 * `probing`: *Probe all models* is asking this one now.
 */
function ModelRow({
  model,
  agent,
  now,
  offline = false,
  probing = false,
  failed,
}: {
  model: OllamaModel;
  agent: string | undefined;
  now: number;
  offline?: boolean;
  probing?: boolean;
  failed?: string;
}) {
  const probe = useProbeModel(model.name, agent);
  const p = model.probe;
  const busy = probe.isPending || probing;
  // The accessible name starts with the visible text (WCAG 2.5.3), then names the model.
  const probeLabel = busy ? "Probing…" : p ? "Probe again" : "Probe tool calling";
  const error = probe.error?.message ?? failed;
  return (
    <tr>
      <td>
        <strong className="mono">{model.name}</strong>
        <div className="small muted">
          {[model.family, model.parameterSize, model.quantization].filter(Boolean).join(" · ")}
          {model.sizeBytes ? ` · ${formatBytes(model.sizeBytes)}` : ""}
        </div>
      </td>
      <td data-label="Capabilities">
        <div className="row">
          {model.capabilities.map((c) => (
            <span key={c} className={`badge ${capabilityTone[c] ?? "neutral"}`}>
              {c}
            </span>
          ))}
          {model.cloud && (
            <span className="badge warn" title={model.remoteHost ?? "runs on a remote host"}>
              cloud
            </span>
          )}
        </div>
      </td>
      <td data-label="Context" className="num">
        {model.contextLength ? model.contextLength.toLocaleString() : "—"}
      </td>
      <td data-label="Memory">
        {model.loaded ? (
          <span className="badge ok">loaded{model.sizeVramBytes ? ` · ${formatBytes(model.sizeVramBytes)} VRAM` : ""}</span>
        ) : (
          <span className="muted small">not loaded</span>
        )}
      </td>
      <td data-label="Tool calling" className="wide">
        <div className="stack" style={{ gap: "0.3rem" }}>
          {p ? (
            <div>
              <span className={`badge ${probeText[p.outcome].tone}`}>{probeText[p.outcome].label}</span>{" "}
              <When at={p.checkedAt} now={now} className="small muted" />
              {p.detail && (
                <div className="small muted mono truncate" title={p.detail} style={{ maxWidth: 280 }}>
                  {p.detail}
                </div>
              )}
            </div>
          ) : (
            <span className="small muted">not probed</span>
          )}
          {!canProbe(model) ? (
            <span className="small muted">embedding model: it cannot chat, so it cannot call tools</span>
          ) : (
            !offline && (
              <div>
                <button type="button" className="small" disabled={busy} onClick={() => probe.mutate()} aria-label={`${probeLabel} for ${model.name}`}>
                  {probeLabel}
                </button>
              </div>
            )
          )}
          {error && (
            <span className="small" role="alert" style={{ color: "var(--danger)" }}>
              {error}
            </span>
          )}
        </div>
      </td>
    </tr>
  );
}

function ModelTable({
  models,
  agent,
  now,
  label,
  offline,
  run = null,
}: {
  models: OllamaModel[];
  agent: string | undefined;
  now: number;
  label: string;
  offline?: boolean;
  run?: ProbeAllRun | null;
}) {
  return (
    <div className="table-wrap">
      <table aria-label={label} className="cards">
        <thead>
          <tr>
            <th>Model</th>
            <th>Capabilities</th>
            <th className="num">Context</th>
            <th>Memory</th>
            <th>Tool calling</th>
          </tr>
        </thead>
        <tbody>
          {models.map((m) => (
            <ModelRow
              key={m.name}
              model={m}
              agent={agent}
              now={now}
              offline={offline}
              probing={run?.state === "running" && run.current === m.name}
              failed={run?.failed[m.name]}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** *Probe all models*: every model that can chat, one at a time, where it is and a Stop; each result lands in its row as it comes. */
function ProbeAll({ models, probeAll }: { models: OllamaModel[]; probeAll: ReturnType<typeof useProbeAll> }) {
  const { run, start, stop } = probeAll;
  const probeable = models.filter(canProbe).map((m) => m.name);
  const running = run?.state === "running";
  return (
    <div className="row">
      {running ? (
        <button type="button" onClick={stop}>
          Stop probing
        </button>
      ) : (
        <button type="button" onClick={() => start(probeable)} disabled={probeable.length === 0}>
          Probe all models
        </button>
      )}
      {running && <progress max={run.models.length} value={run.done} aria-label="Models probed" />}
      <span className="small" role="status">
        {run ? probeAllText(run) : ""}
      </span>
    </div>
  );
}

/** While the server does not answer: one sentence of what to do, then the models it had when last seen. */
function Unreachable({ agent, now }: { agent: string | undefined; now: number }) {
  const last = useOllamaLastKnown(agent, true);
  const url = last.data?.url;
  return (
    <>
      <div className="alert warn" role="alert">
        <strong>
          Ollama is not reachable
          {url ? (
            <>
              {" "}
              at <span className="mono">{url}</span>
            </>
          ) : null}
          .
        </strong>
        <p>
          Start it with <code>ollama serve</code> (or point <code>CORRAL_OLLAMA_URL</code>, or the agent's URL, at a machine where it runs), then
          press <em>Check again</em>. Ollama agents' jobs fail until it answers.
        </p>
      </div>
      {last.data?.seenAt != null && last.data.models.length > 0 && (
        <section className="stack" aria-labelledby="last-known-heading">
          <h2 id="last-known-heading" className="small">
            Last seen <When at={last.data.seenAt} now={now} className="muted" />
          </h2>
          <ModelTable models={last.data.models} agent={agent} now={now} label="Ollama models when last seen" offline />
        </section>
      )}
    </>
  );
}

export function OllamaPage() {
  const agents = useAgents();
  const listsOllamaModels = useListsOllamaModels();
  const ollamaAgents = agents.data?.filter(listsOllamaModels) ?? [];
  const [chosen, setChosen] = useState<string>("");
  const agent = chosen || undefined;
  const models = useOllamaModels(agent, { refetchInterval: 15_000, retry: false });
  const probeAll = useProbeAll(agent);
  const now = useNow(10_000);
  const notFound = models.error instanceof ApiRequestError && models.error.status === 404 && /no route/.test(models.error.message);
  const unreachable = models.error instanceof ApiRequestError && models.error.code === "ollama_unreachable";

  return (
    <>
      <div className="page-head">
        <h1>Ollama</h1>
        <div className="row">
          {ollamaAgents.length > 0 && (
            <label className="row small">
              Ollama server
              <select value={chosen} onChange={(e) => setChosen(e.target.value)}>
                <option value="">Corral's default</option>
                {ollamaAgents.map((a) => (
                  <option key={a.name} value={a.name}>
                    {a.name}
                    {a.baseUrl ? ` — ${a.baseUrl}` : ""}
                  </option>
                ))}
              </select>
            </label>
          )}
          <button type="button" onClick={() => void models.refetch()} disabled={models.isFetching}>
            {models.isFetching ? "Checking…" : "Check again"}
          </button>
        </div>
      </div>
      <p className="muted small">
        The <code>tools</code> capability only says the model's template mentions tools. A probe asks the model for one small tool call and shows
        whether a real call came back; <em>Probe all models</em> asks each in turn.
      </p>
      {unreachable ? (
        <Unreachable agent={agent} now={now} />
      ) : models.isError ? (
        <div className="alert warn" role="alert">
          <strong>{notFound ? "This server has no Ollama support yet." : "Could not list Ollama's models."}</strong>
          <p>{models.error.message}</p>
        </div>
      ) : models.isPending ? (
        <Loading what="Ollama models" />
      ) : (
        <>
          <p className="small">
            <span className="mono">{models.data.url}</span>
            {models.data.version && <span className="muted"> · Ollama {models.data.version}</span>}
            <span className="muted"> · {plural(models.data.models.length, "model")}</span>
          </p>
          {models.data.models.length === 0 ? (
            <EmptyState title="Ollama has no models">
              <span>
                Pull one, e.g. <code>ollama pull qwen2.5:7b</code>.
              </span>
            </EmptyState>
          ) : (
            <div className="stack">
              <ProbeAll models={models.data.models} probeAll={probeAll} />
              <ModelTable models={models.data.models} agent={agent} now={now} label="Ollama models" run={probeAll.run} />
            </div>
          )}
        </>
      )}
    </>
  );
}
