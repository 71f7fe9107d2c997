import { AgentNameSchema, type AgentTool, AgentToolSchema, CreateBudgetBodySchema, SetPriceBodySchema, UpdateAgentBodySchema } from "@corral/shared";
import { CST, type Document, isMap, isSeq, Lexer, LineCounter, type Node, parseDocument } from "yaml";
import { z } from "zod";
import { type ConfigFileRefusal, refusal } from "./read.js";

/** Aliases are for sharing a few fields; thousands are a billion-laughs expansion. */
const MAX_ALIASES = 100;
/** Deeper than agents → name → field → list → item never is, but the parser recurses per level. */
const MAX_DEPTH = 64;
/** Each agent is a set of MCP tools and a row the panel lists; thousands are a mistake or an attack. */
const MAX_AGENTS = 500;

/** The orchestrator's tool names, read as Corral's; `ssh` has no counterpart (a worker with a host's keys is out of bounds). */
const TOOL_ALIASES: Record<string, string> = { read: "read_file", write: "write_file", list_dir: "list_files", http_request: "http_get" };

const toolList = `${AgentToolSchema.options.join(", ")} (read, write, list_dir and http_request also work)`;
const FileToolSchema = z.string().transform((name, ctx): AgentTool => {
  const tool = AgentToolSchema.safeParse(TOOL_ALIASES[name] ?? name);
  if (tool.success) return tool.data;
  ctx.addIssue({ code: "custom", message: `unknown tool ${name}; the tools are ${toolList}` });
  return z.NEVER;
});

/** One agent as the file declares it: the orchestrator's `provider` (mapped in providers.ts), and Corral's own fields. */
const FileAgentSchema = UpdateAgentBodySchema.omit({ provider: true, api: true, tools: true })
  .extend({
    provider: z.string().min(1).max(200),
    tools: z.array(FileToolSchema).max(AgentToolSchema.options.length).nullable().optional(),
  })
  .strict();
export type FileAgent = z.infer<typeof FileAgentSchema>;

const ConfigFileSchema = z
  .object({
    agents: z
      .record(AgentNameSchema, FileAgentSchema)
      .refine((agents) => Object.keys(agents).length <= MAX_AGENTS, `a config file may declare at most ${MAX_AGENTS} agents`)
      .nullable()
      .optional(),
    budgets: z.array(CreateBudgetBodySchema).max(100).nullable().optional(),
    prices: z.array(SetPriceBodySchema).max(1000).nullable().optional(),
  })
  .strict();

export interface ConfigDeclarations {
  agents: Record<string, FileAgent>;
  budgets: z.infer<typeof CreateBudgetBodySchema>[];
  prices: z.infer<typeof SetPriceBodySchema>[];
  /** The refusal of a declared value, pointing at its place in the file. */
  refuse(path: (string | number)[], message: string): ConfigFileRefusal;
}

/** Parses and checks the file's text; the refusal names the line, column and field at fault. */
export function parseConfigText(text: string): ConfigDeclarations {
  const deep = tooDeep(text);
  if (deep !== null) {
    const pos = linePosOf(text, deep);
    throw refusal(`nested more than ${MAX_DEPTH} levels deep`, null, pos.line, pos.col);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false, merge: true });
  const [syntax] = doc.errors;
  if (syntax) {
    const pos = lines.linePos(syntax.pos[0]);
    throw refusal(syntax.message.split("\n")[0] ?? syntax.message, null, pos.line, pos.col);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    const message = (err as Error).message;
    throw refusal(/alias/i.test(message) ? `too many aliases (at most ${MAX_ALIASES} expansions): ${message}` : message);
  }
  const at = (path: (string | number)[], key: boolean) => {
    const offset = offsetOf(doc, path, key);
    return offset === null ? { line: null, col: null } : lines.linePos(offset);
  };
  const parsed = ConfigFileSchema.safeParse(data ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (!issue) throw refusal("the file was refused");
    const unknownKey = issue.code === "unrecognized_keys" ? issue.keys[0] : undefined;
    const path = (unknownKey === undefined ? issue.path : [...issue.path, unknownKey]).map((p) => (typeof p === "symbol" ? String(p) : p));
    const pos = at(path, unknownKey !== undefined || issue.code === "invalid_key");
    const message = unknownKey === undefined ? issue.message : `unknown field ${unknownKey}`;
    throw refusal(message, path.join(".") || null, pos.line, pos.col);
  }
  return {
    agents: parsed.data.agents ?? {},
    budgets: parsed.data.budgets ?? [],
    prices: parsed.data.prices ?? [],
    refuse: (path, message) => {
      const pos = at(path, false);
      return refusal(message, path.join("."), pos.line, pos.col);
    },
  };
}

/**
 * The offset of a value in the document (of its key, when `key`), or of the nearest ancestor that
 * is there: a missing field is reported where its object is.
 */
function offsetOf(doc: Document, path: (string | number)[], key: boolean): number | null {
  let node: unknown = doc.contents;
  let best: number | null = (node as Node | null)?.range?.[0] ?? null;
  for (const [i, part] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((p) => String((p.key as { value?: unknown } | null)?.value ?? p.key) === String(part));
      if (!pair) break;
      best = (pair.key as Node | null)?.range?.[0] ?? best;
      node = pair.value;
      // A scalar is pointed at itself; a whole map or list at the key that names it.
      if (i === path.length - 1 && !key && !isMap(node) && !isSeq(node)) best = (node as Node | null)?.range?.[0] ?? best;
    } else if (isSeq(node) && typeof part === "number") {
      node = node.items[part];
      best = (node as Node | null)?.range?.[0] ?? best;
    } else break;
  }
  return best;
}

/**
 * Where the text nests deeper than MAX_DEPTH (null: it does not), read from the lexer's tokens,
 * which do not recurse: flow collections, block indentation and `- - -` items on one line. The
 * composer recurses per level, and some thousands of levels take the process down rather than throw.
 */
function tooDeep(text: string): number | null {
  let flow = 0;
  let itemsOnLine = 0;
  let atLineStart = true;
  const indents: number[] = [];
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    const type = CST.tokenType(token);
    if (type === "newline") {
      atLineStart = true;
      itemsOnLine = 0;
    } else {
      if (atLineStart && flow === 0 && type !== "comment") {
        const indent = type === "space" ? token.length : 0;
        while ((indents.at(-1) ?? -1) >= indent) indents.pop();
        indents.push(indent);
      }
      atLineStart = false;
      if (type === "seq-item-ind") itemsOnLine++;
      else if (type === "flow-seq-start" || type === "flow-map-start") flow++;
      else if (type === "flow-seq-end" || type === "flow-map-end") flow = Math.max(0, flow - 1);
    }
    if (indents.length + itemsOnLine + flow > MAX_DEPTH) return offset;
    offset += token.length;
  }
  return null;
}

function linePosOf(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, col: offset - before.lastIndexOf("\n") };
}
