import type { ModelMessage } from "ai";
import type { AppConfig } from "../../config.js";
import { effectiveModel } from "../model.js";
import { MAX_EARLIER_TURNS } from "../ollama/history.js";
import { conversationRecorder } from "../conversation-recorder.js";
import type { ConversationStore, InProcessAdapter, JobSpec, TurnMessage, WorkerIO, WorkerResult } from "../types.js";
import { runApiLoop } from "./loop.js";
import { apiBaseUrl, apiKey, apiOf } from "./endpoint.js";
import { languageModel } from "./provider.js";
import { DEFAULT_MAX_STEPS } from "./step-limit.js";
import { apiToolSet } from "./tools.js";

/** The system prompt of an agent without a role. */
const DEFAULT_ROLE = [
  "You are a worker that completes one task inside a working directory.",
  "Use the tools to act; paths are relative to the working directory, and you cannot reach files outside it.",
  "When the task asks for a file, write it with write_file rather than pasting it in your answer.",
  "When you are done, reply with a short final answer and no tool call.",
].join(" ");

/**
 * An earlier turn as its prompt and final answer: tool calls are left out, so a conversation
 * continues on any provider and model, whatever ids its calls had.
 */
function asPromptAndAnswer(turns: TurnMessage[][]): ModelMessage[] {
  return turns.flatMap((turn) => {
    const prompt = turn.find((m) => m.role === "user");
    const answer = turn.findLast((m) => m.role === "assistant" && !m.toolCalls);
    if (!prompt) return [];
    return [
      { role: "user" as const, content: prompt.content },
      { role: "assistant" as const, content: answer?.content || "(no answer)" },
    ];
  });
}

/** Every API agent runs through this adapter; agents differ in API, base URL, model, role and tools. */
export function createApiAdapter(config: AppConfig, conversations: ConversationStore): InProcessAdapter {
  return {
    async run(spec: JobSpec, io: WorkerIO): Promise<WorkerResult> {
      const { agent } = spec;
      const modelName = spec.model ?? effectiveModel(agent, config);
      if (!modelName) throw new Error(`agent ${agent.name} has no model: set the agent's model or launch with one`);
      apiOf(agent);
      const key = apiKey(agent, config);
      await conversations.restart(spec.jobId);
      const earlier = spec.followUp ? await conversations.turns(spec.followUp.jobId, MAX_EARLIER_TURNS) : [];
      if (spec.followUp && !earlier.length) {
        throw new Error(
          `job ${spec.followUp.jobId} kept no conversation to continue (its worker never reached the model); launch without session to start afresh`,
        );
      }
      const baseUrl = apiBaseUrl(agent);
      const files: string[] = [];
      const maxSteps = agent.maxSteps ?? DEFAULT_MAX_STEPS;
      const tools = apiToolSet({
        agent,
        config,
        workdir: spec.workdir,
        sandboxGit: spec.sandboxGit,
        signal: io.signal,
        wrote: (file) => files.push(file),
      });
      io.write(
        "sys",
        `[api] ${modelName} at ${baseUrl} (${agent.api}) · tools: ${Object.keys(tools).join(", ") || "none"} · at most ${maxSteps} steps\n`,
      );
      if (earlier.length) io.write("sys", `[api] continuing the conversation: ${earlier.length} earlier turn(s), sent as prompt and answer\n`);
      const conversation = conversationRecorder(conversations, spec.jobId);
      // The conversation is stored before the job's end, whether the loop finished or failed.
      const result = await runApiLoop({
        model: languageModel(agent, modelName, key),
        modelName,
        baseUrl,
        system: agent.role ?? DEFAULT_ROLE,
        prompt: spec.prompt,
        earlier: asPromptAndAnswer(earlier),
        tools,
        maxSteps,
        io,
        record: conversation.record,
      }).finally(() => conversation.stored().catch(() => undefined));
      await conversation.stored();
      if (files.length) io.write("sys", `[api] files written: ${[...new Set(files)].join(", ")}\n`);
      return { finalText: result.finalText || undefined, usage: result.usage };
    },
  };
}
