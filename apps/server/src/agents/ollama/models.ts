import type { ModelResponse, Ollama, ShowResponse } from "ollama";
import { metadataSignal, ollamaClient } from "./client.js";

/** What /api/show says about one model. */
export interface ModelFacts {
  capabilities: string[];
  tools: boolean;
  contextLength: number | null;
  family: string | null;
  parameterSize: string | null;
  quantization: string | null;
  cloud: boolean;
  remoteHost: string | null;
}

/** /api/show fields newer than the client's types. */
type ShowBody = ShowResponse & { remote_host?: string; remote_model?: string };
type TagBody = ModelResponse & { remote_host?: string; capabilities?: string[] };

const nonEmpty = (s: string | undefined | null) => (s ? s : null);

function contextLength(info: Record<string, unknown> | undefined): number | null {
  if (!info) return null;
  const arch = info["general.architecture"];
  const direct = typeof arch === "string" ? info[`${arch}.context_length`] : undefined;
  if (typeof direct === "number") return direct;
  for (const [key, value] of Object.entries(info)) {
    if (key.endsWith(".context_length") && typeof value === "number") return value;
  }
  return null;
}

function factsFromShow(show: ShowBody): ModelFacts {
  // Servers before capabilities existed only had the template; `.Tools` in it is what they checked.
  const capabilities = Array.isArray(show.capabilities)
    ? show.capabilities
    : ["completion", ...(/\.Tools\b/.test(show.template ?? "") ? ["tools"] : [])];
  const remoteHost = nonEmpty(show.remote_host);
  return {
    capabilities,
    tools: capabilities.includes("tools"),
    contextLength: contextLength(show.model_info as unknown as Record<string, unknown> | undefined),
    family: nonEmpty(show.details?.family),
    parameterSize: nonEmpty(show.details?.parameter_size),
    quantization: nonEmpty(show.details?.quantization_level),
    cloud: remoteHost !== null,
    remoteHost,
  };
}

export async function showModel(client: Ollama, model: string): Promise<ModelFacts> {
  return factsFromShow((await client.show({ model })) as ShowBody);
}

export interface ListedModel extends ModelFacts {
  name: string;
  sizeBytes: number | null;
  loaded: boolean;
  sizeVramBytes: number | null;
}

export interface ServerModels {
  version: string | null;
  models: ListedModel[];
}

/** Each model's facts from /api/show (one call per model), with loaded state from /api/ps. */
export async function listServerModels(baseUrl: string, signal?: AbortSignal): Promise<ServerModels> {
  const client = ollamaClient(baseUrl, metadataSignal(signal));
  const [tags, ps, version] = await Promise.all([
    client.list(),
    client.ps().catch(() => ({ models: [] as ModelResponse[] })),
    client.version().then(
      (v) => v.version ?? null,
      () => null,
    ),
  ]);
  const running = new Map(ps.models.map((m) => [m.name, m]));
  const models = await Promise.all(
    (tags.models as TagBody[]).map(async (tag): Promise<ListedModel> => {
      const facts = await showModel(client, tag.name).catch(
        (): ModelFacts => ({
          capabilities: tag.capabilities ?? [],
          tools: (tag.capabilities ?? []).includes("tools"),
          contextLength: null,
          family: nonEmpty(tag.details?.family),
          parameterSize: nonEmpty(tag.details?.parameter_size),
          quantization: nonEmpty(tag.details?.quantization_level),
          cloud: !!tag.remote_host,
          remoteHost: nonEmpty(tag.remote_host),
        }),
      );
      const loaded = running.get(tag.name);
      return {
        name: tag.name,
        ...facts,
        // A cloud model's size is that of its manifest, not of weights on this machine.
        sizeBytes: facts.cloud ? null : (tag.size ?? null),
        loaded: !!loaded,
        sizeVramBytes: loaded ? (loaded.size_vram ?? null) : null,
      };
    }),
  );
  return { version, models };
}

/** Names of the server's models whose template supports tools, for error messages. */
export async function toolCapableModels(baseUrl: string, signal?: AbortSignal): Promise<string[]> {
  const { models } = await listServerModels(baseUrl, signal);
  return models.filter((m) => m.tools).map((m) => m.name);
}
