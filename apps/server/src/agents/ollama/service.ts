import {
  OllamaModelSchema,
  type OllamaLastKnown,
  type OllamaModel,
  type OllamaModelList,
  type OllamaProbe,
  type OllamaProbeBody,
  type OllamaServerQuery,
  type ProbeOutcome,
} from "@corral/shared";
import type { AppConfig } from "../../config.js";
import type { AgentsRepo, OllamaModelsRepo } from "../../db/registry.js";
import type { OllamaModelRow } from "../../db/schema.js";
import { badInput, notFound, ServiceError } from "../../lib/errors.js";
import { explainOllamaError } from "./client.js";
import { listServerModels } from "./models.js";
import { ollamaBaseUrl } from "./ollama.js";
import { probeModel } from "./probe.js";

export interface OllamaServiceDeps {
  config: AppConfig;
  agents: AgentsRepo;
  models: OllamaModelsRepo;
}

function storedProbe(row: OllamaModelRow | undefined): OllamaProbe | null {
  if (!row?.probeOutcome || row.probedAt === null) return null;
  return { outcome: row.probeOutcome as ProbeOutcome, detail: row.probeDetail ?? "", checkedAt: row.probedAt };
}

/** What the Ollama servers behind the agents can do: capability listing and live tool-call probes. */
export class OllamaService {
  constructor(private readonly deps: OllamaServiceDeps) {}

  /** The server of the named Ollama agent, else CORRAL_OLLAMA_URL. */
  async serverUrl(agentName?: string): Promise<string> {
    if (!agentName) return this.deps.config.ollamaUrl;
    const agent = await this.deps.agents.get(agentName);
    if (!agent) throw notFound(`agent ${agentName} does not exist`, "agent");
    if (agent.kind !== "ollama") throw badInput(`agent ${agentName} is a ${agent.kind} agent, not an Ollama one`, "agent");
    return ollamaBaseUrl(agent, this.deps.config);
  }

  async models(query: OllamaServerQuery = {}): Promise<OllamaModelList> {
    const url = await this.serverUrl(query.agent);
    let listed: Awaited<ReturnType<typeof listServerModels>>;
    try {
      listed = await listServerModels(url);
    } catch (err) {
      throw new ServiceError(await explainOllamaError(err, { baseUrl: url, model: "" }), 503, undefined, undefined, "ollama_unreachable");
    }
    const checkedAt = Date.now();
    const stored = new Map((await this.deps.models.forServer(url)).map((row) => [row.model, row]));
    await this.deps.models.saveFacts(
      url,
      listed.models.map(({ name, ...facts }) => ({ model: name, facts })),
      checkedAt,
    );
    const models: OllamaModel[] = listed.models.map((m) => ({ ...m, checkedAt, probe: storedProbe(stored.get(m.name)) }));
    return { url, version: listed.version, models };
  }

  /** The last successful listing, from the rows it stored (a model gone since keeps an older `checkedAt` and is left out). */
  async lastKnown(query: OllamaServerQuery = {}): Promise<OllamaLastKnown> {
    const url = await this.serverUrl(query.agent);
    const rows = (await this.deps.models.forServer(url)).filter((row) => row.facts && row.checkedAt !== null);
    const seenAt = rows.reduce<number | null>((latest, row) => Math.max(latest ?? 0, row.checkedAt ?? 0), null);
    const models = rows.flatMap((row) => {
      if (row.checkedAt !== seenAt) return [];
      const model = OllamaModelSchema.safeParse({
        ...row.facts,
        name: row.model,
        loaded: false,
        sizeVramBytes: null,
        checkedAt: row.checkedAt,
        probe: storedProbe(row),
      });
      return model.success ? [model.data] : [];
    });
    return { url, seenAt, models: models.sort((a, b) => a.name.localeCompare(b.name)) };
  }

  /** `signal`: the caller went away; the question to Ollama is dropped, and what a cut-short probe saw is not kept. */
  async probe(body: OllamaProbeBody, signal?: AbortSignal): Promise<OllamaProbe & { model: string; url: string }> {
    const url = await this.serverUrl(body.agent);
    const probe = await probeModel(url, body.model, signal);
    if (signal?.aborted) throw new ServiceError(`the probe of ${body.model} was stopped before Ollama answered`, 409);
    await this.deps.models.saveProbe(url, body.model, probe);
    return { model: body.model, url, ...probe };
  }
}
