import { refName, type JsonSchema } from "./openapi.js";

/** Text, or the name of a type the reference defines (the page links it). */
export type SchemaPart = string | { ref: string };

const literal = (value: unknown) => JSON.stringify(value);

/**
 * A JSON schema as a TypeScript-like type, one field a line with its description as a comment:
 * what a reader needs to write a request or read an answer, without the validation details.
 */
export function schemaText(schema: JsonSchema | undefined): SchemaPart[] {
  const parts: SchemaPart[] = [];
  const emit = (part: SchemaPart) => {
    const last = parts[parts.length - 1];
    if (typeof part === "string" && typeof last === "string") parts[parts.length - 1] = last + part;
    else parts.push(part);
  };
  write(schema, 0, emit);
  return parts;
}

function write(schema: JsonSchema | undefined, depth: number, emit: (part: SchemaPart) => void): void {
  if (!schema || Object.keys(schema).length === 0) return emit("unknown");
  if (schema.$ref) return emit({ ref: refName(schema.$ref) });
  if (schema.const !== undefined) return emit(literal(schema.const));
  if (schema.enum) return emit(schema.enum.map(literal).join(" | "));
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return writeJoined(union, " | ", depth, emit);
  if (schema.allOf) return writeJoined(schema.allOf, " & ", depth, emit);
  if (Array.isArray(schema.type)) return emit(schema.type.join(" | "));
  if (schema.type === "array") {
    const complex = Boolean(schema.items?.anyOf ?? schema.items?.oneOf ?? schema.items?.enum);
    if (complex) emit("(");
    write(schema.items, depth, emit);
    return emit(complex ? ")[]" : "[]");
  }
  if (schema.type === "object" || schema.properties) return writeObject(schema, depth, emit);
  emit(schema.type ?? "unknown");
}

function writeJoined(members: JsonSchema[], separator: string, depth: number, emit: (part: SchemaPart) => void): void {
  members.forEach((member, i) => {
    if (i > 0) emit(separator);
    write(member, depth, emit);
  });
}

function writeObject(schema: JsonSchema, depth: number, emit: (part: SchemaPart) => void): void {
  const fields = Object.entries(schema.properties ?? {});
  const extra = typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
  if (fields.length === 0) {
    if (!extra) return emit("{}");
    emit("{ [key: string]: ");
    write(extra, depth, emit);
    return emit(" }");
  }
  const indent = "  ".repeat(depth + 1);
  emit("{\n");
  for (const [name, field] of fields) {
    emit(`${indent}${name}${schema.required?.includes(name) ? "" : "?"}: `);
    write(field, depth + 1, emit);
    const notes = [field.description, field.default !== undefined ? `default ${literal(field.default)}` : undefined].filter(Boolean);
    emit(notes.length ? `  // ${notes.join("; ")}\n` : "\n");
  }
  emit(`${"  ".repeat(depth)}}`);
}
