import type { OllamaModel } from "@corral/shared";
import type { McpServer } from "@modelcontextprotocol/server";
import { defineTool } from "./define.js";
import { z } from "zod";
import type { Services } from "../../services.js";
import { guarded, textResult } from "./results.js";
import { READS_OUTSIDE } from "./annotations.js";

const OllamaModelsInput = z.object({
  agent: z.string().min(1).max(40).optional().describe("Whose server (default: CORRAL_OLLAMA_URL)"),
  probe: z.string().min(1).max(200).optional().describe("A model to probe first"),
});

const gb = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`;
const when = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

function modelLine(m: OllamaModel): string {
  const facts = [
    m.tools ? "tools" : "no tools",
    `capabilities ${m.capabilities.join(",") || "unknown"}`,
    m.contextLength ? `context ${m.contextLength}` : null,
    m.cloud ? `cloud (${m.remoteHost}; not free)` : m.sizeBytes !== null ? gb(m.sizeBytes) : null,
    [m.family, m.parameterSize, m.quantization].filter(Boolean).join(" ") || null,
    m.loaded ? `loaded${m.sizeVramBytes !== null ? `, ${gb(m.sizeVramBytes)} in VRAM` : ""}` : null,
    m.probe ? `probe ${m.probe.outcome} at ${when(m.probe.checkedAt)}` : "not probed",
  ].filter(Boolean);
  return `${m.name} · ${facts.join(" · ")}`;
}

/** `ollama_models`: which models of an Ollama server can be delegated to, checked before delegating. */
export function registerOllamaTools(server: McpServer, services: Services): void {
  defineTool(
    server,
    "ollama_models",
    {
      title: "Ollama models",
      annotations: READS_OUTSIDE,
      description: "Ollama models: capabilities, context, size, loaded; probe tests real tool calls.",
      input: OllamaModelsInput,
    },
    ({ agent, probe }) =>
      guarded(async () => {
        const lines: string[] = [];
        if (probe) {
          const result = await services.ollama.probe({ model: probe, agent });
          lines.push(`probe ${result.model}: ${result.outcome} — ${result.detail}`);
        }
        const list = await services.ollama.models({ agent });
        lines.push(`${list.url}${list.version ? ` (Ollama ${list.version})` : ""} · ${list.models.length} model(s), checked ${when(Date.now())}`);
        for (const model of list.models) lines.push(modelLine(model));
        return textResult(lines.join("\n"));
      }),
  );
}
