import {
  AgentNameSchema,
  type AgentTool,
  type ConfigFileError,
  AgentToolSchema,
  CreateBudgetBodySchema,
  SetPriceBodySchema,
  UpdateAgentBodySchema,
} from "@corral/shared";
import { CST, type Document, isMap, isScalar, isSeq, Lexer, LineCounter, type Node, type Pair, parseDocument, visit, type YAMLMap } from "yaml";
import { z } from "zod";
import { ownValue } from "./providers.js";
import { ConfigFileRefusal, configError, MAX_GATHERED_ERRORS, refusal } from "./read.js";

/** Aliases are for sharing a few fields; thousands are a billion-laughs expansion. */
const MAX_ALIASES = 100;
/** Nodes an aliased value may hold: `<<: *defaults` shares a few fields; a map of 50,000 merged into every agent is 5 million. */
const MAX_ALIASED_NODES = 1000;
/** Deeper than agents → name → field → list → item never is, but the parser recurses per level. */
const MAX_DEPTH = 64;
/** Each agent is a set of MCP tools and a row the panel lists; thousands are a mistake or an attack. */
const MAX_AGENTS = 500;

/** The orchestrator's tool names, read as Corral's; `ssh` has no counterpart (a worker with a host's keys is out of bounds). */
const TOOL_ALIASES: Record<string, string> = { read: "read_file", write: "write_file", list_dir: "list_files", http_request: "http_get" };

/** How Corral does what the orchestrator does on another machine: a runner there (docs/runners.md). */
const ON_ANOTHER_MACHINE =
  "to run an agent on another machine, start `corral runner` there with a label and give the agent that runnerLabel (docs/runners.md)";

const toolList = `${AgentToolSchema.options.join(", ")} (read, write, list_dir and http_request also work)`;
const FileToolSchema = z.string().transform((name, ctx): AgentTool => {
  const tool = AgentToolSchema.safeParse(ownValue(TOOL_ALIASES, name) ?? name);
  if (tool.success) return tool.data;
  ctx.addIssue({
    code: "custom",
    message:
      name === "ssh"
        ? `Corral gives no model an ssh tool (a worker holding a host's keys is out of its bounds); remove it: ${ON_ANOTHER_MACHINE}`
        : `unknown tool ${name}; the tools are ${toolList}`,
  });
  return z.NEVER;
});

/** Top-level sections of the orchestrator's file that Corral does another way, and what to do instead. */
const ELSEWHERE: Record<string, string> = {
  servers: `Corral does not reach servers over ssh; remove servers: ${ON_ANOTHER_MACHINE}`,
};

/** One agent as the file declares it: the orchestrator's `provider` (mapped in providers.ts), and Corral's own fields. */
const FileAgentSchema = UpdateAgentBodySchema.omit({ provider: true, api: true, tools: true })
  .extend({
    provider: z.string().min(1).max(200),
    tools: z.array(FileToolSchema).max(AgentToolSchema.options.length).nullable().optional(),
  })
  .strict();
export type FileAgent = z.infer<typeof FileAgentSchema>;

/** The file's sections; each agent is checked apart (FileAgentSchema), so one report names every agent's errors. */
const ConfigFileSchema = z
  .object({
    agents: z
      .record(AgentNameSchema, z.unknown())
      .refine((agents) => Object.keys(agents).length <= MAX_AGENTS, `a config file may declare at most ${MAX_AGENTS} agents`)
      .nullable()
      .optional(),
    budgets: z.array(CreateBudgetBodySchema).max(100).nullable().optional(),
    prices: z.array(SetPriceBodySchema).max(1000).nullable().optional(),
  })
  .strict();

export interface ConfigDeclarations {
  /** The agents declared without an error in their fields. */
  agents: Record<string, FileAgent>;
  budgets: z.infer<typeof CreateBudgetBodySchema>[];
  prices: z.infer<typeof SetPriceBodySchema>[];
  /** What is wrong in the file's shape and fields (empty: nothing); the service adds what its checks find. */
  errors: ConfigFileError[];
  /** An error in a declared value, pointing at its place in the file. */
  errorAt(path: (string | number)[], message: string): ConfigFileError;
}

/**
 * Parses and checks the file's text. A file that cannot be read as YAML is refused here, with
 * every syntax error; what is wrong in its fields is collected in `errors`, every agent's, each
 * with its line, column and field.
 */
export function parseConfigText(text: string): ConfigDeclarations {
  const deep = tooDeep(text);
  if (deep !== null) {
    const pos = linePosOf(text, deep);
    throw refusal(`nested more than ${MAX_DEPTH} levels deep`, null, pos.line, pos.col);
  }
  const lines = new LineCounter();
  // Keys are checked unique below, in one pass per map: the parser's own check compares each key with every earlier one.
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false, prettyErrors: false, merge: true });
  const syntax = doc.errors.map((error) => ({ offset: error.pos[0], message: error.message.split("\n")[0] ?? error.message }));
  if (syntax.length === 0) syntax.push(...duplicateKeys(doc).map((offset) => ({ offset, message: "Map keys must be unique" })));
  if (syntax.length > 0) {
    throw new ConfigFileRefusal(
      syntax.slice(0, MAX_GATHERED_ERRORS).map(({ offset, message }) => {
        const pos = lines.linePos(offset);
        return configError(message, null, pos.line, pos.col);
      }),
    );
  }
  const oversized = oversizedAlias(doc);
  if (oversized !== null) {
    const pos = lines.linePos(oversized);
    throw refusal(`an alias of a value of more than ${MAX_ALIASED_NODES} nodes (aliases share a few fields)`, null, pos.line, pos.col);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    const message = (err as Error).message;
    throw refusal(/alias/i.test(message) ? `too many aliases (at most ${MAX_ALIASES} expansions): ${message}` : message);
  }
  const placed = (path: (string | number)[], message: string, key: boolean) => {
    const offset = offsetOf(doc, path, key);
    const pos = offset === null ? { line: null, col: null } : lines.linePos(offset);
    return configError(message, path.join(".") || null, pos.line, pos.col);
  };
  /**
   * A schema's issues as errors, under `prefix` in the file, added to `errors` until it holds
   * MAX_GATHERED_ERRORS: a file of a hundred thousand unknown keys (or one merged into every agent) is not read key by key.
   */
  const gather = (errors: ConfigFileError[], issues: z.core.$ZodIssue[], prefix: (string | number)[]) => {
    for (const issue of issues) {
      const where = [...prefix, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
      // Each unknown field apart, where it is; the orchestrator's own sections with what Corral does instead.
      const found =
        issue.code === "unrecognized_keys"
          ? issue.keys.map((key) => () => placed([...where, key], (where.length === 0 && ownValue(ELSEWHERE, key)) || `unknown field ${key}`, true))
          : [() => placed(where, issue.message, issue.code === "invalid_key")];
      for (const error of found) {
        if (errors.length >= MAX_GATHERED_ERRORS) return;
        errors.push(error());
      }
    }
  };
  const parsed = ConfigFileSchema.safeParse(data ?? {});
  if (!parsed.success) {
    // The sections that are well formed are still checked, so the report says everything at once.
    const errors: ConfigFileError[] = [];
    gather(errors, parsed.error.issues, []);
    const sections = data !== null && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
    const { shape } = ConfigFileSchema;
    const agents = shape.agents.safeParse(sections.agents);
    const budgets = shape.budgets.safeParse(sections.budgets);
    const prices = shape.prices.safeParse(sections.prices);
    return declarations(
      (agents.success && agents.data) || {},
      (budgets.success && budgets.data) || [],
      (prices.success && prices.data) || [],
      errors,
    );
  }
  return declarations(parsed.data.agents ?? {}, parsed.data.budgets ?? [], parsed.data.prices ?? [], []);

  function declarations(
    declared: Record<string, unknown>,
    budgets: ConfigDeclarations["budgets"],
    prices: ConfigDeclarations["prices"],
    errors: ConfigFileError[],
  ): ConfigDeclarations {
    const agents: Record<string, FileAgent> = {};
    for (const [name, value] of Object.entries(declared)) {
      const agent = FileAgentSchema.safeParse(value);
      if (agent.success) agents[name] = agent.data;
      else gather(errors, agent.error.issues, ["agents", name]);
    }
    return { agents, budgets, prices, errors, errorAt: (path, message) => placed(path, message, false) };
  }
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
      const pair = pairOf(node, String(part));
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

const keyName = (pair: Pair) => String((pair.key as { value?: unknown } | null)?.value ?? pair.key);
const indexes = new WeakMap<YAMLMap, Map<string, Pair>>();

/** A map's pair of that key, from an index made once per map: a report may look up every key of a map of thousands. */
function pairOf(map: YAMLMap, key: string): Pair | undefined {
  let index = indexes.get(map);
  if (!index) {
    index = new Map();
    for (const pair of map.items) if (!index.has(keyName(pair))) index.set(keyName(pair), pair);
    indexes.set(map, index);
  }
  return index.get(key);
}

/** Where an alias names a value bigger than MAX_ALIASED_NODES (null: none does); each value is counted once. */
function oversizedAlias(doc: Document): number | null {
  const sizes = new Map<Node, number>();
  let found: number | null = null;
  visit(doc, {
    Alias(_, alias) {
      const source = alias.resolve(doc);
      if (!source) return;
      let size = sizes.get(source);
      if (size === undefined) {
        let counted = 0;
        visit(source, () => (++counted > MAX_ALIASED_NODES ? visit.BREAK : undefined));
        size = counted;
        sizes.set(source, size);
      }
      if (size > MAX_ALIASED_NODES) {
        found = alias.range?.[0] ?? 0;
        return visit.BREAK;
      }
    },
  });
  return found;
}

/** Where a map holds a key a second time (as the parser's uniqueKeys compares them: scalars by value). */
function duplicateKeys(doc: Document): number[] {
  const offsets: number[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        if (!isScalar(key)) continue;
        if (seen.has(key.value)) offsets.push(key.range?.[0] ?? 0);
        else seen.add(key.value);
      }
    },
  });
  return offsets;
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
