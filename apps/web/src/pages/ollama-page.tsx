import type { OllamaModel, ProbeOutcome } from "@corral/shared";
import { useState } from "react";
import { ApiRequestError } from "../api/client.js";
import { EmptyState, Loading } from "../components/states.js";
import { useAgents } from "../hooks/use-agents.js";
import { useNow } from "../hooks/use-now.js";
import { formatAgo, formatBytes } from "../lib/format/format.js";
import { useOllamaModels, useProbeModel } from "../hooks/use-ollama.js";

const capabilityTone: Record<string, string> = { tools: "ok", vision: "info", thinking: "info", embedding: "warn", completion: "neutral" };

const probeText: Record<ProbeOutcome, { label: string; tone: string }> = {
  calls_tools: { label: "calls tools", tone: "ok" },
  text_tool_call: { label: "writes calls as text", tone: "warn" },
  no_tool_call: { label: "did not call the tool", tone: "warn" },
  no_tools_support: { label: "no tool support", tone: "bad" },
  error: { label: "probe failed", tone: "bad" },
};

function ModelRow({ model, agent, now }: { model: OllamaModel; agent: string | undefined; now: number }) {
  const probe = useProbeModel(model.name, agent);
  const p = model.probe;
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
              <span className="small muted" title={new Date(p.checkedAt).toLocaleString()}>
                {formatAgo(p.checkedAt, now)}
              </span>
              {p.detail && (
                <div className="small muted mono truncate" title={p.detail} style={{ maxWidth: 280 }}>
                  {p.detail}
                </div>
              )}
            </div>
          ) : (
            <span className="small muted">not probed</span>
          )}
          <div>
            <button
              type="button"
              className="small"
              disabled={probe.isPending}
              onClick={() => probe.mutate()}
              // The name holds the visible words (speech control users say what they see), plus the model.
              aria-label={probe.isPending ? undefined : `Probe tool calling of ${model.name}`}
            >
              {probe.isPending ? "Probing…" : "Probe tool calling"}
            </button>
          </div>
          {probe.error && (
            <span className="small" role="alert" style={{ color: "var(--danger)" }}>
              {probe.error.message}
            </span>
          )}
        </div>
      </td>
    </tr>
  );
}

export function OllamaPage() {
  const agents = useAgents();
  const ollamaAgents = agents.data?.filter((a) => a.kind === "ollama") ?? [];
  const [chosen, setChosen] = useState<string>("");
  const agent = chosen || undefined;
  const models = useOllamaModels(agent, { refetchInterval: 15_000, retry: false });
  const now = useNow(10_000);
  const notFound = models.error instanceof ApiRequestError && models.error.status === 404 && /no route/.test(models.error.message);

  return (
    <>
      <div className="page-head">
        <h1>Ollama</h1>
        <div className="row">
          {ollamaAgents.length > 0 && (
            <label className="row small">
              Server of
              <select value={chosen} onChange={(e) => setChosen(e.target.value)}>
                <option value="">default (CORRAL_OLLAMA_URL)</option>
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
        The <code>tools</code> capability only says the model's template mentions tools. <em>Probe tool calling</em> asks the model for one small tool
        call and shows whether a real call came back.
      </p>
      {models.isError ? (
        <div className="alert warn" role="alert">
          <strong>{notFound ? "This server has no Ollama support yet." : "Ollama is not reachable."}</strong>
          <p>{models.error.message}</p>
          {!notFound && (
            <p>
              Start it with <code>ollama serve</code> (or point <code>CORRAL_OLLAMA_URL</code>, or the agent's URL, at a machine where it runs), then
              press <em>Check again</em>. Ollama agents' jobs fail until it answers.
            </p>
          )}
        </div>
      ) : models.isPending ? (
        <Loading what="Ollama models" />
      ) : (
        <>
          <p className="small">
            <span className="mono">{models.data.url}</span>
            {models.data.version && <span className="muted"> · Ollama {models.data.version}</span>}
            <span className="muted"> · {models.data.models.length} models</span>
          </p>
          {models.data.models.length === 0 ? (
            <EmptyState title="Ollama has no models">
              <span>
                Pull one, e.g. <code>ollama pull qwen2.5:7b</code>.
              </span>
            </EmptyState>
          ) : (
            <div className="table-wrap">
              <table aria-label="Ollama models" className="cards">
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
                  {models.data.models.map((m) => (
                    <ModelRow key={m.name} model={m} agent={agent} now={now} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </>
  );
}
