import type { ChatResponse, Message, Tool, ToolCall } from "ollama";
import type { TurnMessage, UsageReport, WorkerIO } from "../types.js";
import { explainOllamaError, isAbort, metadataSignal, noToolsMessage, ollamaClient } from "./client.js";
import { fitHistory, toTurnMessage } from "./history.js";
import { showModel, toolCapableModels, type ModelFacts } from "./models.js";
import { fileTools, runFileTool } from "../tools/file-tools.js";

/** The workdir's file tools in the shape Ollama's chat API takes. */
const ollamaTools: Tool[] = fileTools.map((definition) => ({ type: "function", function: definition }));

export interface LoopOptions {
  baseUrl: string;
  model: string;
  workdir: string;
  prompt: string;
  /** The agent's role, sent as the system prompt instead of the built-in one. */
  role: string | null;
  maxIterations: number;
  /** Cap on num_ctx. */
  maxCtx: number;
  io: WorkerIO;
  /** A follow-up's earlier turns, oldest first (one array per job), sent before the prompt as far as they fit. */
  earlier: TurnMessage[][];
  /** Keeps each message of this turn (the prompt first) as it joins the conversation. */
  record(message: TurnMessage): void;
}

export interface LoopResult {
  finalText: string;
  usage: UsageReport;
  filesWritten: string[];
}

/** prompt_eval_count this close to num_ctx means Ollama probably cut the start of the conversation. */
const TRUNCATION_RATIO = 0.9;

const SYSTEM_PROMPT = [
  "You are a worker that completes one task inside a working directory.",
  "Use the tools to act: write_file creates or overwrites a file, read_file reads one, list_files lists a directory.",
  "Paths are relative to the working directory; you cannot reach files outside it.",
  "When the task asks for a file, write it with write_file rather than pasting it in your answer.",
  "When you are done, reply with a short final answer and no tool call.",
].join(" ");

const seconds = (ns: number | undefined) => (ns ? `${(ns / 1e9).toFixed(2)} s` : "0 s");

function describeCall(call: ToolCall): string {
  const args = Object.entries(call.function.arguments ?? {}).map(([key, value]) => {
    const text = typeof value === "string" ? JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value) : JSON.stringify(value);
    return `${key}=${text}`;
  });
  return `${call.function.name}(${args.join(", ")})`;
}

class LoopError extends Error {}

type Explain = (err: unknown) => Promise<string>;
type LoopUsage = UsageReport & { inputTokens: number; outputTokens: number };

/** Reads the model's facts, refuses a model without tool calling, and says which context size the run uses. */
async function prepareModel(opts: LoopOptions, explain: Explain): Promise<{ facts: ModelFacts; numCtx: number }> {
  const { io, model, baseUrl } = opts;
  let facts: ModelFacts;
  try {
    facts = await showModel(ollamaClient(baseUrl, metadataSignal(io.signal)), model);
  } catch (err) {
    throw new LoopError(await explain(err));
  }
  if (!facts.tools) {
    throw new LoopError(noToolsMessage(model, await toolCapableModels(baseUrl, io.signal).catch(() => [])));
  }
  const numCtx = Math.min(facts.contextLength ?? opts.maxCtx, opts.maxCtx);
  io.write(
    "sys",
    `[ollama] ${model} at ${baseUrl} · num_ctx ${numCtx}${facts.contextLength ? ` (model context ${facts.contextLength})` : ""}${facts.cloud ? ` · cloud model via ${facts.remoteHost}` : ""}\n`,
  );
  return { facts, numCtx };
}

interface Turn {
  content: string;
  calls: ToolCall[];
  last: ChatResponse | undefined;
}

/** One model turn, streamed to the output as it comes; an error before the stream starts is explained. */
async function streamTurn(
  client: ReturnType<typeof ollamaClient>,
  request: { model: string; messages: Message[]; numCtx: number },
  io: WorkerIO,
  turn: number,
  explain: Explain,
): Promise<Turn> {
  let content = "";
  const calls: ToolCall[] = [];
  let last: ChatResponse | undefined;
  let started = false;
  try {
    const stream = await client.chat({
      model: request.model,
      messages: request.messages,
      tools: ollamaTools,
      stream: true,
      options: { num_ctx: request.numCtx },
    });
    started = true;
    for await (const chunk of stream) {
      if (chunk.message?.content) {
        content += chunk.message.content;
        io.write("out", chunk.message.content);
      }
      // One by one: a spread of a server-sized array can overflow the call stack.
      for (const call of chunk.message?.tool_calls ?? []) calls.push(call);
      if (chunk.done) last = chunk;
    }
  } catch (err) {
    if (io.signal.aborted || isAbort(err)) throw new LoopError("cancelled");
    if (started) throw new LoopError(`Ollama stopped mid-answer (turn ${turn}): ${err instanceof Error ? err.message : String(err)}`);
    throw new LoopError(await explain(err));
  }
  if (content && !content.endsWith("\n")) io.write("out", "\n");
  return { content, calls, last };
}

/** Adds a turn's token counts to the usage, reports them, and warns when the context was probably cut. */
function recordTurn(last: ChatResponse, usage: LoopUsage, numCtx: number, io: WorkerIO, turn: number): void {
  usage.inputTokens += last.prompt_eval_count ?? 0;
  usage.outputTokens += last.eval_count ?? 0;
  io.usage({ ...usage });
  io.write(
    "sys",
    `[ollama] turn ${turn}: prompt ${last.prompt_eval_count ?? 0} tok, output ${last.eval_count ?? 0} tok, ${seconds(last.total_duration)} (load ${seconds(last.load_duration)}, prompt ${seconds(last.prompt_eval_duration)}, eval ${seconds(last.eval_duration)})\n`,
  );
  if ((last.prompt_eval_count ?? 0) >= numCtx * TRUNCATION_RATIO) {
    io.write(
      "err",
      `[ollama] warning: the prompt used ${last.prompt_eval_count} of ${numCtx} context tokens; Ollama has probably truncated the conversation (raise CORRAL_OLLAMA_MAX_CTX if the model and memory allow)\n`,
    );
  }
}

/** The conversation as it grows: each message is kept in the registry as it joins. */
type Conversation = { messages: Message[]; add(message: Message): void };

/** The system prompt, the earlier turns that fit (a follow-up) and the prompt; says what it left out of the earlier turns. */
function startConversation(opts: LoopOptions, numCtx: number): Conversation {
  const messages: Message[] = [{ role: "system", content: opts.role ?? SYSTEM_PROMPT }];
  const conversation: Conversation = {
    messages,
    add(message) {
      messages.push(message);
      opts.record(toTurnMessage(message));
    },
  };
  if (opts.earlier.length) {
    const history = fitHistory(opts.earlier, numCtx);
    for (const message of history.messages) messages.push(message);
    const notes = [
      history.compacted ? `${history.compacted} cut to prompt and answer` : null,
      history.left ? `${history.left} older left out` : null,
    ].filter((n) => n !== null);
    opts.io.write(
      "sys",
      `[ollama] continuing the conversation: ${history.whole + history.compacted} earlier turn(s), ${history.messages.length} message(s) sent again${notes.length ? ` (${notes.join(", ")}: over half of num_ctx ${numCtx})` : ""}\n`,
    );
  }
  conversation.add({ role: "user", content: opts.prompt });
  return conversation;
}

/** Runs the model's tool calls in the workdir and appends their results to the conversation. */
async function runCalls(calls: ToolCall[], opts: LoopOptions, conversation: Conversation, filesWritten: string[]): Promise<void> {
  const { io } = opts;
  for (const call of calls) {
    if (io.signal.aborted) throw new LoopError("cancelled");
    io.write("out", `→ ${describeCall(call)}\n`);
    const outcome = await runFileTool(opts.workdir, call.function.name, call.function.arguments ?? {});
    if (outcome.wrote) filesWritten.push(outcome.wrote);
    const shown = outcome.text.length > 300 ? `${outcome.text.slice(0, 300)}…` : outcome.text;
    io.write("out", `← ${shown}\n`);
    conversation.add({ role: "tool", content: outcome.text, tool_name: call.function.name });
  }
}

/**
 * The worker loop: chat with tools, run the calls the model makes inside the workdir, feed the
 * results back, until the model answers without calling anything or the turn limit is reached.
 */
export async function runToolLoop(opts: LoopOptions): Promise<LoopResult> {
  const { io, model, baseUrl } = opts;
  const explain: Explain = (err) => explainOllamaError(err, { baseUrl, model, toolModels: () => toolCapableModels(baseUrl, io.signal) });
  const { facts, numCtx } = await prepareModel(opts, explain);

  const client = ollamaClient(baseUrl, io.signal);
  const conversation = startConversation(opts, numCtx);
  const { messages } = conversation;
  const usage: LoopUsage = { model, inputTokens: 0, outputTokens: 0 };
  // Local models cost nothing; a cloud model is billed elsewhere at a price we do not know.
  if (!facts.cloud) usage.costUsd = 0;
  const filesWritten: string[] = [];
  let totalNs = 0;

  for (let turn = 1; turn <= opts.maxIterations; turn++) {
    const { content, calls, last } = await streamTurn(client, { model, messages, numCtx }, io, turn, explain);
    if (last) {
      totalNs += last.total_duration ?? 0;
      recordTurn(last, usage, numCtx, io, turn);
    }
    conversation.add({ role: "assistant", content, ...(calls.length ? { tool_calls: calls } : {}) });
    if (!calls.length) {
      io.write(
        "sys",
        `[ollama] done after ${turn} turn(s), ${usage.inputTokens} prompt + ${usage.outputTokens} output tokens, ${seconds(totalNs)} in the model\n`,
      );
      return { finalText: content.trim(), usage, filesWritten };
    }
    await runCalls(calls, opts, conversation, filesWritten);
  }
  throw new LoopError(
    `stopped after ${opts.maxIterations} model turns without a final answer: the model kept calling tools (limit CORRAL_OLLAMA_MAX_ITERATIONS=${opts.maxIterations})`,
  );
}
