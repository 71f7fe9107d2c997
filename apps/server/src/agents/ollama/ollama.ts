import type { AppConfig } from "../../config.js";
import type { AgentRow } from "../../db/schema.js";
import { writeAnswerFile } from "../../lib/confined-files.js";
import { effectiveModel } from "../model.js";
import { conversationRecorder } from "../conversation-recorder.js";
import type { ConversationStore, InProcessAdapter, JobSpec, WorkerIO, WorkerResult } from "../types.js";
import { MAX_EARLIER_TURNS } from "./history.js";
import { runToolLoop } from "./loop.js";

/** The server an Ollama agent talks to: its own baseUrl, else CORRAL_OLLAMA_URL. */
export const ollamaBaseUrl = (agent: AgentRow, config: AppConfig) => agent.baseUrl ?? config.ollamaUrl;

/** An Ollama agent's model: its own, else `CORRAL_<AGENT>_MODEL`, else (user-added agents) CORRAL_OLLAMA_MODEL. */
export const ollamaAgentModel = (agent: AgentRow, config: AppConfig): string => effectiveModel(agent, config) ?? config.defaultModels.ollama ?? "";

/**
 * Every Ollama agent runs through this one adapter; agents differ only in server and model. Its
 * conversation is kept in the registry as it runs, and a follow-up sends the earlier turns again.
 */
export function createOllamaAdapter(config: AppConfig, conversations: ConversationStore): InProcessAdapter {
  return {
    async run(spec: JobSpec, io: WorkerIO): Promise<WorkerResult> {
      // A retry runs the turn again from its prompt: what the failed attempt said is not part of it.
      await conversations.restart(spec.jobId);
      const earlier = spec.followUp ? await conversations.turns(spec.followUp.jobId, MAX_EARLIER_TURNS) : [];
      if (spec.followUp && !earlier.length) {
        throw new Error(
          `job ${spec.followUp.jobId} kept no conversation to continue (its worker never reached the model); launch without session to start afresh`,
        );
      }
      const conversation = conversationRecorder(conversations, spec.jobId);
      // The conversation is stored before the job's end, whether the loop finished or failed.
      const result = await runToolLoop({
        baseUrl: ollamaBaseUrl(spec.agent, config),
        model: spec.model ?? ollamaAgentModel(spec.agent, config),
        workdir: spec.workdir,
        prompt: spec.prompt,
        role: spec.agent.role,
        maxIterations: config.ollamaMaxIterations,
        maxCtx: config.ollamaMaxCtx,
        io,
        earlier,
        record: conversation.record,
      }).finally(() => conversation.stored().catch(() => undefined));
      await conversation.stored();
      // As pyCorral: output.md only when there is an answer; output-<job>.md keeps each job's own.
      const note = (line: string) => io.write("sys", line);
      if (result.finalText) await writeAnswerFile(spec.workdir, "output.md", `${result.finalText}\n`, note);
      await writeAnswerFile(spec.workdir, `output-${spec.jobId}.md`, result.finalText ? `${result.finalText}\n` : "", note);
      if (result.filesWritten.length) io.write("sys", `[ollama] files written: ${[...new Set(result.filesWritten)].join(", ")}\n`);
      return { finalText: result.finalText || undefined, usage: result.usage };
    },
  };
}
