/** The part of an OpenAPI 3.1 document the API reference page reads (GET /api/openapi.json). */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  description?: string;
  default?: unknown;
}

interface MediaTypes {
  content?: Record<string, { schema?: JsonSchema }>;
}

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: unknown[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }[];
  requestBody?: MediaTypes & { required?: boolean };
  responses?: Record<string, MediaTypes & { description?: string }>;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export interface ApiParameter {
  name: string;
  in: string;
  required: boolean;
  description: string | undefined;
  schema: JsonSchema | undefined;
}

export interface ApiResponse {
  status: string;
  description: string;
  /** Media type and schema of each body the status may carry; empty when it has none. */
  bodies: { mediaType: string; schema: JsonSchema | undefined }[];
}

export interface ApiOperation {
  /** `GET /api/jobs/{id}`: unique, usable as an anchor. */
  id: string;
  method: string;
  path: string;
  tag: string;
  summary: string;
  description: string | undefined;
  public: boolean;
  parameters: ApiParameter[];
  body: JsonSchema | undefined;
  responses: ApiResponse[];
}

const METHODS = ["get", "post", "put", "patch", "delete"];

/** Bodies are JSON unless a route says otherwise (raw files, metrics). */
function firstSchema(media: MediaTypes | undefined): JsonSchema | undefined {
  return media?.content?.["application/json"]?.schema ?? Object.values(media?.content ?? {})[0]?.schema;
}

/** Every operation of the document, grouped by tag in the document's order, methods in HTTP order. */
export function operationsByTag(document: OpenApiDocument): Map<string, ApiOperation[]> {
  const groups = new Map<string, ApiOperation[]>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? "other";
      const operation: ApiOperation = {
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        tag,
        summary: op.summary ?? "",
        description: op.description,
        public: Array.isArray(op.security) && op.security.length === 0,
        parameters: (op.parameters ?? []).map((p) => ({
          name: p.name,
          in: p.in,
          required: p.required ?? false,
          description: p.description ?? p.schema?.description,
          schema: p.schema,
        })),
        body: firstSchema(op.requestBody),
        responses: Object.entries(op.responses ?? {}).map(([status, r]) => ({
          status,
          description: r.description ?? "",
          bodies: Object.entries(r.content ?? {}).map(([mediaType, m]) => ({ mediaType, schema: m.schema })),
        })),
      };
      groups.set(tag, [...(groups.get(tag) ?? []), operation]);
    }
  }
  return groups;
}

/** The name a `$ref` points at (`#/components/schemas/Job` → `Job`). */
export const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1);
