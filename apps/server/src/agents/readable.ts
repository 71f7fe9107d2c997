import { READABLE_MAX_SHORT, READABLE_MAX_TEXT, type ReadableEvent, type UsageSummary } from "@corral/shared";
import { obj, parseJsonLine, str } from "./json-lines.js";
import type { AgentKindModule, Json } from "./types.js";

/** Cuts `text` to `max` characters with an ellipsis; `oneLine` also folds it onto one line. */
export function cut(text: string, max: number, oneLine = false): string {
  const t = oneLine ? text.replace(/\s+/g, " ").trim() : text.trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** One line of text, short. */
export const short = (text: string | undefined) => cut(text ?? "", READABLE_MAX_SHORT, true);

// Antigravity CLI's tools name theirs AbsolutePath, TargetFile and CommandLine.
const fileKeys = ["file_path", "filePath", "path", "notebook_path", "absolute_path", "dir_path", "directory", "AbsolutePath", "TargetFile"];
const commandKeys = ["command", "cmd", "CommandLine", "pattern", "query", "url", "prompt", "description"];

/** A tool call's most telling argument: a file, a command, a pattern; else its arguments in short. */
function toolArgs(input: unknown): string {
  const args = obj(input);
  if (!args) return typeof input === "string" ? short(input) : "";
  for (const key of [...fileKeys, ...commandKeys]) {
    const value = args[key];
    if (typeof value === "string" && value) return short(value);
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return short(value.join(" "));
  }
  const json = JSON.stringify(args);
  return json === "{}" ? "" : short(json);
}

/**
 * Building blocks for agent kinds' readers, each bounded so one event stays one short line; an
 * answer is kept whole (one printed line bounds it), since the panel shows it as lines of its own.
 */
export const readable = {
  text: (text: string | undefined, delta?: boolean): ReadableEvent =>
    delta ? { type: "text", text: text ?? "", delta } : { type: "text", text: (text ?? "").trim() },
  prompt: (text: string | undefined): ReadableEvent => ({ type: "prompt", text: short(text) }),
  thinking: (text: string | undefined): ReadableEvent => ({ type: "thinking", text: short(text || "thinking") }),
  call: (name: string, input?: unknown): ReadableEvent => ({ type: "tool_call", name, args: input === undefined ? "" : toolArgs(input) }),
  result: (ok: boolean, detail?: string): ReadableEvent => ({ type: "tool_result", ok, detail: detail ? short(detail) : "" }),
  usage: (scope: "job" | "turn" | "step", usage: Partial<UsageSummary>): ReadableEvent => ({ type: "usage", scope, usage: { extra: [], ...usage } }),
  error: (message: string, usage?: Partial<UsageSummary>): ReadableEvent => ({
    type: "error",
    message: cut(message, READABLE_MAX_TEXT),
    ...(usage ? { usage: { extra: [], ...usage } } : {}),
  }),
};

/** Error texts that are an API's JSON body inside a string: the body's own message reads better. */
export function errorMessage(text: string | undefined): string | undefined {
  if (!text?.trim().startsWith("{")) return text;
  try {
    const body = obj(JSON.parse(text));
    return str(obj(body?.error)?.message) ?? str(body?.message) ?? text;
  } catch {
    return text;
  }
}

/** The text of a content field that is a string or a list of text blocks. */
export function blockText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => str(obj(c)?.text) ?? "").join(" ");
}

/**
 * What one whole line of stdout reads as: its kind's events, or the line as printed when it is
 * not an event (noise before the JSON starts, a kind that prints plain text).
 */
export function readableLine(module: AgentKindModule | undefined, line: string): ReadableEvent[] {
  const ev: Json | undefined = module?.readEvent ? parseJsonLine(line) : undefined;
  if (!ev || typeof ev[module?.eventKey ?? "type"] !== "string" || !module?.readEvent) {
    return [{ type: "output", stream: "out", text: line.replace(/\r?\n$/, "") }];
  }
  return module.readEvent(ev);
}
