import type { AgentKind } from "@corral/shared";
import type { OutputLine } from "./output-buffer.js";

/**
 * Readable lines for the NDJSON that JSON-mode workers print (gemini `-o stream-json`, claude
 * `--output-format stream-json --verbose`, opencode `run --format json`, codex `exec --json`;
 * shapes as in apps/server/test/fixtures/samples). One event becomes one short line, coloured
 * with ANSI codes so the output view renders and searches it like any other log line.
 */
export type EventFormat = "gemini" | "claude" | "opencode" | "codex";

const formats: Partial<Record<AgentKind, EventFormat>> = { gemini: "gemini", claude: "claude", opencode: "opencode", codex: "codex" };

/** The event shape a job's agent prints, or null for kinds whose output is plain text. */
export function eventFormatFor(kind: AgentKind | undefined): EventFormat | null {
  return (kind && formats[kind]) ?? null;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** Bounds for what one event may put on screen; the raw view still has everything. */
export const MAX_TEXT = 2000;
export const MAX_SHORT = 160;

/** Cuts `text` to `max` characters with an ellipsis; `oneLine` also folds it onto one line. */
function cut(text: string, max: number, oneLine = false): string {
  const t = oneLine ? text.replace(/\s+/g, " ").trim() : text.trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

const esc = "\u001b[";
const paint = (code: string, text: string) => `${esc}${code}m${text}${esc}0m`;
const style = {
  text: (t: string) => cut(t, MAX_TEXT),
  dim: (t: string) => paint("2", t),
  tool: (t: string) => paint("36", t),
  ok: (t: string) => paint("32", t),
  error: (t: string) => paint("31", t),
  thinking: (t: string) => paint("2;3", t),
};

const count = (n: number) => n.toLocaleString("en-US");
const price = (usd: number) => (usd === 0 ? "$0" : usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function usage(parts: { input?: number; output?: number; cost?: number; ms?: number; extra?: string[] }): string {
  const bits: string[] = [];
  if (parts.input !== undefined || parts.output !== undefined) bits.push(`${count(parts.input ?? 0)} in / ${count(parts.output ?? 0)} out`);
  if (parts.cost !== undefined) bits.push(price(parts.cost));
  if (parts.ms !== undefined) bits.push(seconds(parts.ms));
  bits.push(...(parts.extra ?? []));
  return bits.join(" · ");
}

const fileKeys = ["file_path", "filePath", "path", "notebook_path", "absolute_path", "dir_path", "directory"];
const commandKeys = ["command", "cmd", "pattern", "query", "url", "prompt", "description"];

/** A tool call's most telling argument: a file, a command, a pattern; else its arguments in short. */
function toolArgs(input: unknown): string {
  const args = obj(input);
  if (!args) return typeof input === "string" ? cut(input, MAX_SHORT, true) : "";
  for (const key of [...fileKeys, ...commandKeys]) {
    const value = args[key];
    if (typeof value === "string" && value) return cut(value, MAX_SHORT, true);
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return cut(value.join(" "), MAX_SHORT, true);
  }
  const json = JSON.stringify(args);
  return json === "{}" ? "" : cut(json, MAX_SHORT, true);
}

const call = (name: string, input?: unknown) => {
  const args = input === undefined ? "" : toolArgs(input);
  return style.tool(`→ ${name}${args ? ` ${args}` : ""}`);
};
const result = (ok: boolean, detail?: string) => {
  const d = detail ? cut(detail, MAX_SHORT, true) : "";
  return ok ? style.ok(`← ok${d ? ` ${d}` : ""}`) : style.error(`← error${d ? `: ${d}` : ""}`);
};
const failure = (message: string) => style.error(`✗ ${cut(message, MAX_TEXT)}`);

/** Error texts that are an API's JSON body inside a string: the body's own message reads better. */
function errorMessage(text: string | undefined): string | undefined {
  if (!text?.trim().startsWith("{")) return text;
  try {
    const body = obj(JSON.parse(text));
    return str(obj(body?.error)?.message) ?? str(body?.message) ?? text;
  } catch {
    return text;
  }
}

/** What one line shows. `delta` pieces of one answer (gemini) are joined into one line. */
export interface Readable {
  text: string;
  delta?: boolean;
}

type Reader = (ev: Json) => Readable | null;

function blockText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => str(obj(c)?.text) ?? "").join(" ");
}

const readers: Record<EventFormat, Reader> = {
  gemini(ev) {
    switch (ev.type) {
      case "init":
        return { text: style.dim(`· session started${str(ev.model) ? ` · ${str(ev.model)}` : ""}`) };
      case "message": {
        const content = str(ev.content) ?? "";
        if (ev.role === "assistant") return ev.delta === true ? { text: content, delta: true } : { text: style.text(content) };
        return { text: style.dim(`› ${cut(content, MAX_SHORT, true)}`) };
      }
      case "tool_use":
        return { text: call(str(ev.tool_name) ?? "tool", ev.parameters) };
      case "tool_result": {
        const ok = ev.status === "success";
        return { text: result(ok, ok ? str(ev.output) : (str(obj(ev.error)?.message) ?? str(ev.output))) };
      }
      case "error":
        return { text: failure(errorMessage(str(ev.message) ?? str(obj(ev.error)?.message)) ?? "error") };
      case "result": {
        const stats = obj(ev.stats);
        const summary = usage({
          input: num(stats?.input_tokens),
          output: num(stats?.output_tokens),
          ms: num(stats?.duration_ms),
          extra: num(stats?.tool_calls) !== undefined ? [`${num(stats?.tool_calls)} tool calls`] : [],
        });
        if (ev.status === "success") return { text: style.dim(`✓ done${summary ? ` · ${summary}` : ""}`) };
        return { text: failure(`${errorMessage(str(obj(ev.error)?.message)) ?? `ended with status ${String(ev.status)}`}${summary ? ` · ${summary}` : ""}`) };
      }
      default:
        return null;
    }
  },

  claude(ev) {
    if (ev.type === "system") {
      if (ev.subtype !== "init") return { text: style.dim(`· ${String(ev.subtype ?? "system")}`) };
      const tools = Array.isArray(ev.tools) ? `${ev.tools.length} tools` : "";
      return { text: style.dim(["· session started", str(ev.model), tools].filter(Boolean).join(" · ")) };
    }
    if (ev.type === "assistant" || ev.type === "user") {
      const blocks = Array.isArray(obj(ev.message)?.content) ? (obj(ev.message)?.content as unknown[]) : [];
      const lines = blocks.map(obj).flatMap((b): string[] => {
        if (!b) return [];
        if (b.type === "text") return ev.type === "assistant" ? [style.text(str(b.text) ?? "")] : [style.dim(`› ${cut(str(b.text) ?? "", MAX_SHORT, true)}`)];
        if (b.type === "thinking") return [style.thinking(`∴ ${cut(str(b.thinking) ?? "thinking", MAX_SHORT, true)}`)];
        if (b.type === "tool_use") return [call(str(b.name) ?? "tool", b.input)];
        if (b.type === "tool_result") return [result(b.is_error !== true, blockText(b.content))];
        return [];
      });
      if (!lines.length && typeof obj(ev.message)?.content === "string") lines.push(style.dim(`› ${cut(str(obj(ev.message)?.content) ?? "", MAX_SHORT, true)}`));
      return lines.length ? { text: lines.join("\n") } : null;
    }
    if (ev.type === "result") {
      const u = obj(ev.usage);
      const input = (num(u?.input_tokens) ?? 0) + (num(u?.cache_read_input_tokens) ?? 0) + (num(u?.cache_creation_input_tokens) ?? 0);
      const turns = num(ev.num_turns);
      const summary = usage({
        input,
        output: num(u?.output_tokens),
        cost: num(ev.total_cost_usd),
        ms: num(ev.duration_ms),
        extra: turns !== undefined ? [`${turns} turn${turns === 1 ? "" : "s"}`] : [],
      });
      if (ev.is_error === true) return { text: failure(`${str(ev.result) ?? String(ev.subtype)} · ${summary}`) };
      return { text: style.dim(`✓ done · ${summary}`) };
    }
    return null;
  },

  opencode(ev) {
    const part = obj(ev.part);
    switch (ev.type) {
      case "text":
        return { text: style.text(str(part?.text) ?? "") };
      case "reasoning":
        return { text: style.thinking(`∴ ${cut(str(part?.text) ?? "thinking", MAX_SHORT, true)}`) };
      case "tool_use": {
        const state = obj(part?.state);
        const line = call(str(part?.tool) ?? "tool", state?.input);
        if (state?.status === "completed") return { text: `${line}\n${result(true, str(state.output))}` };
        if (state?.status === "error") return { text: `${line}\n${result(false, str(state.error))}` };
        return { text: line };
      }
      case "step_finish": {
        const tokens = obj(part?.tokens);
        const cache = obj(tokens?.cache);
        const input = (num(tokens?.input) ?? 0) + (num(cache?.read) ?? 0) + (num(cache?.write) ?? 0);
        const output = (num(tokens?.output) ?? 0) + (num(tokens?.reasoning) ?? 0);
        return { text: style.dim(`· step done · ${usage({ input, output, cost: num(part?.cost) })}`) };
      }
      case "error": {
        const err = obj(ev.error);
        return { text: failure(str(obj(err?.data)?.message) ?? str(err?.message) ?? str(err?.name) ?? "error") };
      }
      default:
        return null;
    }
  },

  codex(ev) {
    const item = obj(ev.item);
    switch (ev.type) {
      case "thread.started":
        return { text: style.dim("· session started") };
      case "item.started":
      case "item.updated":
        if (ev.type === "item.updated") return null;
        if (item?.type === "command_execution") return { text: call("shell", { command: item.command }) };
        if (item?.type === "file_change") return { text: call("patch", changes(item.changes)) };
        if (item?.type === "mcp_tool_call") return { text: call(`${str(item.server) ?? "mcp"}.${str(item.tool) ?? "tool"}`, item.arguments) };
        if (item?.type === "web_search") return { text: call("web_search", { query: item.query }) };
        return null;
      case "item.completed":
        switch (item?.type) {
          case "agent_message":
            return { text: style.text(str(item.text) ?? "") };
          case "reasoning":
            return { text: style.thinking(`∴ ${cut(str(item.text) ?? "thinking", MAX_SHORT, true)}`) };
          case "command_execution": {
            const code = num(item.exit_code);
            const output = str(item.aggregated_output)?.trim().split("\n").at(-1);
            const detail = [code !== undefined ? `exit ${code}` : "", output ?? ""].filter(Boolean).join(" · ");
            return { text: result(item.status !== "failed" && (code ?? 0) === 0, detail) };
          }
          case "file_change":
            return { text: result(item.status !== "failed", changes(item.changes)) };
          case "mcp_tool_call":
            return { text: result(item.status !== "failed" && !item.error, str(obj(item.error)?.message)) };
          case "web_search":
            return { text: result(true, str(item.query)) };
          case "error":
            return { text: failure(errorMessage(str(item.message)) ?? "error") };
          default:
            return null;
        }
      case "turn.completed": {
        const u = obj(ev.usage);
        return { text: style.dim(`✓ turn done · ${usage({ input: num(u?.input_tokens), output: num(u?.output_tokens) })}`) };
      }
      case "turn.failed":
        return { text: failure(errorMessage(str(obj(ev.error)?.message)) ?? "turn failed") };
      case "error":
        return { text: failure(errorMessage(str(ev.message)) ?? "error") };
      default:
        return null;
    }
  },
};

function changes(value: unknown): string {
  if (!Array.isArray(value)) return "";
  return value
    .map(obj)
    .map((c) => `${str(c?.kind) ?? "edit"} ${str(c?.path) ?? ""}`.trim())
    .join(", ");
}

/**
 * What one line of output shows in the readable view: the event's summary, `null` for events
 * with nothing to say (step markers), and the line itself when it is not an event of this shape.
 */
export function readableLine(format: EventFormat, line: string): Readable | null {
  const text = line.trim();
  if (!text.startsWith("{") || !text.endsWith("}")) return { text: line };
  let ev: Json | undefined;
  try {
    ev = obj(JSON.parse(text));
  } catch {
    return { text: line };
  }
  if (!ev || typeof ev.type !== "string") return { text: line };
  return readers[format](ev);
}

/** The readable lines and, for each, the raw line it starts at (so line numbers match the raw view). */
export interface ReadableView {
  lines: OutputLine[];
  sources: number[];
}

/** Lines are immutable once complete, so each is read once however often the view re-renders. */
const cache = new WeakMap<OutputLine, { format: EventFormat; readable: Readable | null }>();

function cached(format: EventFormat, line: OutputLine): Readable | null {
  if (line.stream !== "out") return { text: line.text };
  const hit = cache.get(line);
  if (hit && hit.format === format) return hit.readable;
  const readable = readableLine(format, line.text);
  cache.set(line, { format, readable });
  return readable;
}

/** Bounds a growing answer without trimming it: its pieces may end or start with spaces. */
const bound = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text);

/** The whole buffer in readable form; consecutive answer pieces become one line, bounded. */
export function readableView(format: EventFormat, lines: OutputLine[]): ReadableView {
  const out: OutputLine[] = [];
  const sources: number[] = [];
  const joined: number[] = [];
  let joining = false;
  lines.forEach((line, i) => {
    const readable = cached(format, line);
    if (!readable) return;
    const last = out[out.length - 1];
    if (readable.delta && joining && last) {
      if (last.text.length < MAX_TEXT) out[out.length - 1] = { stream: last.stream, text: bound(last.text + readable.text) };
      return;
    }
    joining = !!readable.delta;
    if (joining) joined.push(out.length);
    out.push({ stream: line.stream, text: joining ? bound(readable.text) : readable.text });
    sources.push(i);
  });
  // An answer streamed line by line ends with a newline that would show as an empty row.
  for (const at of joined) {
    const line = out[at];
    if (line) out[at] = { stream: line.stream, text: line.text.trimEnd() };
  }
  return { lines: out, sources };
}
