import type { CallToolResult, McpServer, RegisteredTool, ServerContext, StandardSchemaWithJSON, ToolAnnotations } from "@modelcontextprotocol/server";
import { z } from "zod";

/** One tool as Corral declares it: the schema that checks a call, and what a client is shown of it. */
export interface ToolSpec<S extends z.ZodObject> {
  title: string;
  description: string;
  annotations: ToolAnnotations;
  input: S;
  /**
   * Fields left out of the schema a client is shown unless the mount shows them (`?options=all`,
   * or a toolset's options): the server still takes and checks them.
   */
  rare?: readonly (keyof z.output<S> & string)[];
  /** The rare fields this mount shows anyway (`shownOptions` of the mount). */
  shown?: readonly string[];
}

/**
 * Registers a tool whose calls are checked by its full zod schema (every bound, the same errors
 * naming the field) while `tools/list` shows a lean JSON Schema: names, types, defaults and one
 * sentence each, in JSON Schema 2020-12 (MCP's default dialect, so no `$schema` is sent). The
 * bounds are what the server enforces, not what a model needs to read on every turn.
 */
export function defineTool<S extends z.ZodObject>(
  server: McpServer,
  name: string,
  spec: ToolSpec<S>,
  handler: (args: z.output<S>, ctx: ServerContext) => Promise<CallToolResult>,
): RegisteredTool {
  return server.registerTool(
    name,
    {
      title: spec.title,
      description: spec.description,
      annotations: spec.annotations,
      inputSchema: shownSchema(
        spec.input,
        (spec.rare ?? []).filter((field) => !spec.shown?.includes(field)),
      ),
    },
    handler as never,
  );
}

/** Keywords of a validation bound: checked by the server, left out of what a client is shown. */
const BOUNDS = [
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minItems",
  "maxItems",
  "additionalProperties",
  "$schema",
] as const;

/** Shown schemas by the zod schema and the fields left out, built once: every session and every request lists the same. */
const shownCache = new WeakMap<z.ZodObject, Map<string, StandardSchemaWithJSON>>();

/**
 * A Standard Schema that validates with `schema` and converts to the lean JSON Schema: the SDK
 * asks a tool's schema for both through the Standard Schema interface, so nothing of the SDK is
 * patched or reached into.
 */
export function shownSchema(schema: z.ZodObject, hidden: readonly string[]): StandardSchemaWithJSON {
  const byHidden = shownCache.get(schema) ?? new Map<string, StandardSchemaWithJSON>();
  shownCache.set(schema, byHidden);
  const key = hidden.join(",");
  const cached = byHidden.get(key);
  if (cached) return cached;
  const json = leanJson(schema, hidden);
  const standard = schema["~standard"];
  const shown: StandardSchemaWithJSON = {
    "~standard": {
      version: 1,
      vendor: "corral",
      validate: (value) => standard.validate(value),
      jsonSchema: { input: () => json, output: () => json },
    },
  };
  byHidden.set(key, shown);
  return shown;
}

function leanJson(schema: z.ZodObject, hidden: readonly string[]): Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io: "input",
    override: ({ jsonSchema }) => {
      for (const keyword of BOUNDS) delete (jsonSchema as Record<string, unknown>)[keyword];
    },
  }) as { properties?: Record<string, unknown>; required?: string[] } & Record<string, unknown>;
  // 2020-12 is MCP's default dialect: saying so on every tool is only more to read.
  delete json.$schema;
  for (const field of hidden) {
    delete json.properties?.[field];
    if (json.required) json.required = json.required.filter((r) => r !== field);
  }
  if (json.required?.length === 0) delete json.required;
  return json;
}
