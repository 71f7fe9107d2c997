import { ollamaAvailability } from "../ollama/availability.js";
import { createOllamaAdapter } from "../ollama/ollama.js";
import type { InProcessAgentKind } from "../types.js";
import { agentFields, role, serverUrl } from "./fields.js";

/**
 * Models on an Ollama server, run by Corral's own tool loop (write_file, read_file, list_files in
 * the workdir). pyCorral's three "becarios" are built in; their models come from
 * CORRAL_<AGENT>_MODEL. The loop prints plain text, shown as printed.
 */
export const ollama: InProcessAgentKind = {
  kind: "ollama",
  provider: "ollama",
  builtins: [
    { name: "ollama", description: "Local Ollama model with file tools (write_file, read_file, list_files) in its workdir" },
    { name: "qwen", description: "Qwen on Ollama with file tools in its workdir" },
    { name: "gemma", description: "Gemma (tools build) on Ollama with file tools in its workdir" },
  ],
  // One GPU serves one model at a time; further jobs wait in Corral, visible and cancellable.
  maxConcurrent: 1,
  fields: agentFields({ connection: [serverUrl("Ollama URL", "empty: CORRAL_OLLAMA_URL")], wide: [role] }),
  ollamaModels: true,
  retries: false,
  // The loop keeps each job's messages in the registry; a follow-up sends them again.
  resumes: true,
  inProcess: { adapter: createOllamaAdapter, availability: ollamaAvailability },
};
