import type { OllamaProbe, ProbeOutcome } from "@corral/shared";
import type { Tool } from "ollama";
import { explainOllamaError, isUnreachable, ollamaClient, responseStatus, unreachableMessage } from "./client.js";

/** One small, unambiguous tool call; a model that really calls tools cannot miss it. */
const probeTool: Tool = {
  type: "function",
  function: {
    name: "add_numbers",
    description: "Add two integers and return their sum.",
    parameters: {
      type: "object",
      properties: {
        a: { type: "integer", description: "First number" },
        b: { type: "integer", description: "Second number" },
      },
      required: ["a", "b"],
    },
  },
};

const PROBE_PROMPT = "Use the add_numbers tool to add 17 and 25. Call the tool; do not answer in text.";
/** A probe is a quick question: a small context and a short answer keep it fast on any model. */
const PROBE_OPTIONS = { num_ctx: 2048, num_predict: 256, temperature: 0 };
const PROBE_TIMEOUT_MS = 120_000;

const short = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** Text that spells out a call instead of making one: JSON naming the tool, or template markers. */
function looksLikeTextCall(text: string): boolean {
  return /add_numbers/.test(text) || /<tool_call>|\[TOOL_CALLS\]|"arguments"\s*:|"parameters"\s*:|<\|python_tag\|>/.test(text);
}

/** Asks the model for one real tool call and reports what came back. */
export async function probeModel(baseUrl: string, model: string, signal?: AbortSignal): Promise<OllamaProbe> {
  const timeout = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  const client = ollamaClient(baseUrl, signal ? AbortSignal.any([signal, timeout]) : timeout);
  const result = (outcome: ProbeOutcome, detail: string): OllamaProbe => ({ outcome, detail, checkedAt: Date.now() });
  try {
    const response = await client.chat({
      model,
      messages: [{ role: "user", content: PROBE_PROMPT }],
      tools: [probeTool],
      stream: false,
      options: PROBE_OPTIONS,
    });
    const calls = response.message?.tool_calls ?? [];
    const call = calls.find((c) => c.function?.name === "add_numbers") ?? calls[0];
    if (call) return result("calls_tools", `called ${call.function.name}(${JSON.stringify(call.function.arguments ?? {})})`);
    const text = (response.message?.content ?? "").trim();
    if (looksLikeTextCall(text)) return result("text_tool_call", `the call came back as plain text: ${short(text)}`);
    return result("no_tool_call", text ? `answered without calling the tool: ${short(text)}` : "answered nothing and called nothing");
  } catch (err) {
    if (isUnreachable(err)) return result("error", unreachableMessage(baseUrl, err));
    const message = err instanceof Error ? err.message : String(err);
    if (responseStatus(err) === 400 && /does not support tools/i.test(message)) {
      return result("no_tools_support", `Ollama refused the tools: ${message}`);
    }
    return result("error", await explainOllamaError(err, { baseUrl, model }));
  }
}
