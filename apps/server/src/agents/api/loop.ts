import { APICallError, type LanguageModel, type ModelMessage, RetryError, stepCountIs, streamText, type ToolSet } from "ai";
import type { Json, TurnMessage, UsageReport, WorkerIO } from "../types.js";

export interface ApiLoopOptions {
  model: LanguageModel;
  /** The model's name as the price table knows it. */
  modelName: string;
  /** Where the API is, for error messages. */
  baseUrl: string;
  system: string;
  prompt: string;
  /** A follow-up's earlier turns as prompt/answer pairs, oldest first. */
  earlier: ModelMessage[];
  tools: ToolSet;
  maxSteps: number;
  io: WorkerIO;
  /** Keeps each message of this turn (the prompt first) as it joins the conversation. */
  record(message: TurnMessage): void;
}

type LoopUsage = UsageReport & { inputTokens: number; outputTokens: number; cachedInputTokens: number };

const SHOWN_CHARS = 300;
const shorten = (text: string, max = SHOWN_CHARS) => (text.length > max ? `${text.slice(0, max)}…` : text);

function describeCall(name: string, input: unknown): string {
  const args = Object.entries((input ?? {}) as Record<string, unknown>).map(
    ([key, value]) => `${key}=${JSON.stringify(typeof value === "string" ? shorten(value, 120) : value)}`,
  );
  return `${name}(${args.join(", ")})`;
}

/** What an SDK error means for the job, in words a user can act on. */
export function explainApiError(err: unknown, baseUrl: string, signal: AbortSignal): string {
  if (signal.aborted) return "cancelled";
  const last = RetryError.isInstance(err) ? err.lastError : err;
  if (APICallError.isInstance(last)) {
    if (last.statusCode !== undefined) return `the API at ${baseUrl} answered ${last.statusCode}: ${last.message}`;
    const code = (last.cause as { cause?: { code?: string } } | undefined)?.cause?.code;
    return `the API at ${baseUrl} is not reachable (${code ?? last.message}); check the agent's baseUrl`;
  }
  return `the API at ${baseUrl}: ${err instanceof Error ? err.message : String(err)}`;
}

/** The turn's messages as the registry keeps them: text, tool calls and tool results. */
function toTurnMessages(messages: ModelMessage[]): TurnMessage[] {
  return messages.flatMap((message): TurnMessage[] => {
    if (message.role === "assistant") {
      const parts = typeof message.content === "string" ? [{ type: "text" as const, text: message.content }] : message.content;
      const text = parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
      const calls = parts.flatMap((p) => (p.type === "tool-call" ? [{ id: p.toolCallId, name: p.toolName, input: p.input } as Json] : []));
      return [{ role: "assistant", content: text, toolCalls: calls.length ? calls : null, toolName: null }];
    }
    if (message.role === "tool") {
      return message.content.flatMap((p): TurnMessage[] =>
        p.type === "tool-result"
          ? [{ role: "tool", content: p.output.type === "text" ? p.output.value : JSON.stringify(p.output), toolCalls: null, toolName: p.toolName }]
          : [],
      );
    }
    return [];
  });
}

/**
 * The tool loop, run by the AI SDK: the model answers or calls tools, the SDK runs them and sends
 * the results back, until it answers without a call or `maxSteps` is reached. Every step is
 * streamed to the job's output; usage is reported after each.
 */
export async function runApiLoop(opts: ApiLoopOptions): Promise<{ finalText: string; usage: LoopUsage }> {
  const { io } = opts;
  opts.record({ role: "user", content: opts.prompt, toolCalls: null, toolName: null });
  const usage: LoopUsage = { model: opts.modelName, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
  const result = streamText({
    model: opts.model,
    system: opts.system,
    messages: [...opts.earlier, { role: "user", content: opts.prompt }],
    tools: opts.tools,
    stopWhen: stepCountIs(opts.maxSteps),
    abortSignal: io.signal,
    // Errors arrive as stream parts below; the SDK would otherwise also print them to the server's console.
    onError: () => {},
  });
  let step = 0;
  let text = "";
  let finish = "";
  const endLine = () => {
    if (text && !text.endsWith("\n")) io.write("out", "\n");
  };
  for await (const part of result.fullStream) {
    switch (part.type) {
      case "start-step":
        step++;
        text = "";
        break;
      case "text-delta":
        text += part.text;
        io.write("out", part.text);
        break;
      case "tool-call":
        endLine();
        io.write("out", `→ ${describeCall(part.toolName, part.input)}\n`);
        break;
      case "tool-result":
        io.write("out", `← ${shorten(typeof part.output === "string" ? part.output : JSON.stringify(part.output))}\n`);
        break;
      case "tool-error":
        io.write("out", `← error: ${shorten(part.error instanceof Error ? part.error.message : String(part.error))}\n`);
        break;
      case "finish-step": {
        endLine();
        finish = part.finishReason;
        const input = part.usage.inputTokens ?? 0;
        const output = part.usage.outputTokens ?? 0;
        usage.inputTokens += input;
        usage.outputTokens += output;
        usage.cachedInputTokens += part.usage.inputTokenDetails.cacheReadTokens ?? 0;
        io.usage({ ...usage });
        io.write("sys", `[api] step ${step}: input ${input} tok, output ${output} tok, ${part.finishReason}\n`);
        break;
      }
      case "abort":
        throw new Error("cancelled");
      case "error":
        throw new Error(explainApiError(part.error, opts.baseUrl, io.signal));
    }
  }
  if (io.signal.aborted) throw new Error("cancelled");
  for (const message of toTurnMessages((await result.response).messages)) opts.record(message);
  if (finish === "tool-calls") {
    throw new Error(
      `stopped after ${opts.maxSteps} model steps without a final answer: the model kept calling tools (the agent's maxSteps is ${opts.maxSteps})`,
    );
  }
  io.write("sys", `[api] done after ${step} step(s), ${usage.inputTokens} input + ${usage.outputTokens} output tokens\n`);
  return { finalText: text.trim(), usage };
}
