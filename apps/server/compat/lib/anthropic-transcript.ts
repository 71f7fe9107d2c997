// Reads what Claude Code sent to the (fake) Anthropic API: the tool results its model was shown.
import { TOOL_SEARCH, toolUseNames } from "../../test/fixtures/fake-llm/anthropic.js";
import { asArray, isRecord, type RecordedRequest } from "../../test/fixtures/fake-llm/script.js";

export interface SeenToolResult {
  toolUseId: string;
  /** The tool's own text, without the `<system-reminder>` blocks Claude Code appends to it. */
  text: string;
  isError: boolean;
}

// Claude Code 2.1.332 appends its reminders (tokens left, …) to a tool's text after a blank line.
const TRAILING_REMINDERS = /(?:\s*<system-reminder>[\s\S]*?<\/system-reminder>)+\s*$/;

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return asArray(content)
    .map((block) => (isRecord(block) && block.type === "text" && typeof block.text === "string" ? block.text : ""))
    .join("");
}

/** Tool results in one Messages request, in conversation order; the tool search's own results are left out. */
export function toolResultsIn(body: unknown): SeenToolResult[] {
  if (!isRecord(body)) return [];
  const names = toolUseNames(body);
  const out: SeenToolResult[] = [];
  for (const message of asArray(body.messages)) {
    if (!isRecord(message)) continue;
    for (const block of asArray(message.content)) {
      if (!isRecord(block) || block.type !== "tool_result") continue;
      const toolUseId = String(block.tool_use_id);
      if (names.get(toolUseId) === TOOL_SEARCH) continue;
      out.push({ toolUseId, text: textOf(block.content).replace(TRAILING_REMINDERS, ""), isError: block.is_error === true });
    }
  }
  return out;
}

/** The tool results of the longest conversation Claude Code sent (its last main-loop request). */
export function lastToolResults(requests: readonly RecordedRequest[]): SeenToolResult[] {
  return requests.map((r) => toolResultsIn(r.body)).reduce((best, cur) => (cur.length > best.length ? cur : best), []);
}

/** Whether the model was made to search for tools before calling them (Claude Code's deferred tools). */
export function usedToolSearch(requests: readonly RecordedRequest[]): boolean {
  return requests.some((r) => isRecord(r.body) && [...toolUseNames(r.body).values()].includes(TOOL_SEARCH));
}

/**
 * Tool names offered to the model in the main-loop requests: those in `tools`, and the deferred ones
 * Claude Code names one a line in the `<system-reminder>` that tells the model to load them with the
 * tool search.
 */
export function offeredTools(requests: readonly RecordedRequest[]): Set<string> {
  const names = new Set<string>();
  for (const r of requests) {
    if (!isRecord(r.body)) continue;
    for (const tool of asArray(r.body.tools)) if (isRecord(tool) && typeof tool.name === "string") names.add(tool.name);
    for (const message of asArray(r.body.messages)) {
      if (!isRecord(message) || message.role !== "user") continue;
      for (const block of asArray(message.content)) {
        if (!isRecord(block) || typeof block.text !== "string") continue;
        if (!block.text.startsWith("<system-reminder>") || !block.text.includes(TOOL_SEARCH)) continue;
        for (const line of block.text.split("\n")) if (/^[A-Za-z0-9_-]+$/.test(line)) names.add(line);
      }
    }
  }
  return names;
}
