// Reads what Claude Code sent to the (fake) Anthropic API: the tool results its model was shown.
import { asArray, isRecord, type RecordedRequest } from "../../test/fixtures/fake-llm/script.js";

export interface SeenToolResult {
  toolUseId: string;
  text: string;
  isError: boolean;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return asArray(content)
    .map((block) => (isRecord(block) && block.type === "text" && typeof block.text === "string" ? block.text : ""))
    .join("");
}

/** Tool results in one Messages request, in conversation order. */
export function toolResultsIn(body: unknown): SeenToolResult[] {
  if (!isRecord(body)) return [];
  const out: SeenToolResult[] = [];
  for (const message of asArray(body.messages)) {
    if (!isRecord(message)) continue;
    for (const block of asArray(message.content)) {
      if (!isRecord(block) || block.type !== "tool_result") continue;
      out.push({ toolUseId: String(block.tool_use_id), text: textOf(block.content), isError: block.is_error === true });
    }
  }
  return out;
}

/** The tool results of the longest conversation Claude Code sent (its last main-loop request). */
export function lastToolResults(requests: readonly RecordedRequest[]): SeenToolResult[] {
  return requests.map((r) => toolResultsIn(r.body)).reduce((best, cur) => (cur.length > best.length ? cur : best), []);
}

/** Tool names offered to the model in the main-loop requests. */
export function offeredTools(requests: readonly RecordedRequest[]): Set<string> {
  const names = new Set<string>();
  for (const r of requests) {
    if (!isRecord(r.body)) continue;
    for (const tool of asArray(r.body.tools)) if (isRecord(tool) && typeof tool.name === "string") names.add(tool.name);
  }
  return names;
}
