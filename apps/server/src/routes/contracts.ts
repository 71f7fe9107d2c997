import fastifySwagger, { type SwaggerTransformObject } from "@fastify/swagger";
import type { OpenAPIV3_1 } from "openapi-types";
import {
  AgentWithAvailabilitySchema,
  ApiErrorSchema,
  AuditEntrySchema,
  BrowserSessionSchema,
  BudgetSchema,
  CostGroupSchema,
  CostTotalsSchema,
  DirEntrySchema,
  JobAttemptSchema,
  JobFileSchema,
  JobSchema,
  OllamaModelSchema,
  PriceSchema,
  RetryPolicySchema,
  UsageSchema,
} from "@corral/shared";
import type { FastifyInstance, FastifySchemaCompiler, FastifyServerOptions } from "fastify";
import { createJsonSchemaTransform, createJsonSchemaTransformObject, serializerCompiler } from "fastify-type-provider-zod";
import { z } from "zod";
import { invalidInput } from "../lib/errors.js";
import type { RouteAccess } from "../security/access.js";

const ERROR_MEANINGS = {
  400: "Bad input: `field` names the field at fault and `issues` lists every bad field",
  401: "No credentials, or a wrong token",
  403: "Refused: a Host or Origin that is not allowed, or a file that cannot be read",
  404: "Not found: `field` names the input that points nowhere",
  409: "Conflicts with the current state (`field` says which input)",
  413: "Body larger than CORRAL_BODY_LIMIT_BYTES, or a file on a runner larger than one answer holds (ask for a Range)",
  415: "Body that is not JSON",
  416: "Range outside the file",
  429: "Too many wrong tokens from this address (see Retry-After)",
  500: "Server fault; the server log has the details",
  503: "A service Corral relies on is unavailable (the registry, a stopped or silent runner), or a queue is full",
  504: "The runner holding the workdir did not answer in time (CORRAL_RUNNER_ANSWER_TIMEOUT_MS)",
  507: "The disk that holds the data dir is full (code `disk_full`): nothing was stored; free space there and try again",
} as const;

type ErrorStatus = keyof typeof ERROR_MEANINGS;

/** What the guard may answer before any route runs, and what any handler may fail with. */
const GUARDED = [400, 401, 403, 429, 500] as const;

interface ErrorResponse {
  description: string;
  content: { "application/json": { schema: typeof ApiErrorSchema } };
}

/**
 * The error answers of a guarded route: the guard's own and `extra`. Each is the API's one error
 * body, so a client reads `error` and `field` the same way whatever went wrong.
 */
export function errors<E extends ErrorStatus>(...extra: E[]): { [S in (typeof GUARDED)[number] | E]: ErrorResponse } {
  const statuses: ErrorStatus[] = [...GUARDED, ...extra];
  const response = (status: ErrorStatus): ErrorResponse => ({
    description: ERROR_MEANINGS[status],
    content: { "application/json": { schema: ApiErrorSchema } },
  });
  return Object.fromEntries(statuses.map((status) => [status, response(status)])) as { [S in (typeof GUARDED)[number] | E]: ErrorResponse };
}

/** Body-taking routes can also be refused for the body's size or type. */
export const BODY_ERRORS = [413, 415] as const;

/** Falls back to zod's global registry, where `.describe()` keeps descriptions. */
class WithDescriptions extends WeakMap<object, { id?: string }> {
  override get(schema: object) {
    return super.get(schema) ?? (z.globalRegistry._map as WeakMap<object, { id?: string }>).get(schema);
  }
  override has(schema: object) {
    return super.has(schema) || z.globalRegistry._map.has(schema as z.core.$ZodType);
  }
}

/**
 * Types the document names once, under components, instead of repeating them in every route
 * (inputs get an `Input` suffix). The ids live in a registry of the document's own: in zod's
 * global one they would also turn up in the MCP tools' JSON schemas, which are made from it.
 */
const named = z.registry<{ id?: string }>();
named._map = new WithDescriptions();
for (const [id, schema] of Object.entries({
  ApiError: ApiErrorSchema,
  Job: JobSchema,
  JobAttempt: JobAttemptSchema,
  JobFile: JobFileSchema,
  Usage: UsageSchema,
  RetryPolicy: RetryPolicySchema,
  Agent: AgentWithAvailabilitySchema,
  Budget: BudgetSchema,
  Price: PriceSchema,
  CostTotals: CostTotalsSchema,
  CostGroup: CostGroupSchema,
  DirEntry: DirEntrySchema,
  OllamaModel: OllamaModelSchema,
  AuditEntry: AuditEntrySchema,
  BrowserSession: BrowserSessionSchema,
})) {
  named.add(schema, { id });
}
const toJsonSchema = createJsonSchemaTransform({ schemaRegistry: named });
const namedTypes = createJsonSchemaTransformObject({ schemaRegistry: named });

const refsIn = (value: unknown) => [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1] as string);

/** The named types, less those no route uses (each type is named both as input and as output). */
const usedTypes: SwaggerTransformObject = (input) => {
  const document = namedTypes(input) as OpenAPIV3_1.Document;
  const schemas = document.components?.schemas ?? {};
  const used = new Set<string>();
  const visit = (name: string) => {
    if (used.has(name) || !(name in schemas)) return;
    used.add(name);
    refsIn(schemas[name]).forEach(visit);
  };
  refsIn(document.paths).forEach(visit);
  return {
    ...document,
    components: { ...document.components, schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))) },
  };
};

/**
 * Refused input is a ServiceError like any other, so it answers the API's one error body
 * `{ error, field, issues }` with the same wording as the MCP and WebSocket doors.
 */
const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema }) =>
  (data) => {
    const result = schema.safeParse(data);
    return result.success ? { value: result.data } : { error: invalidInput(result.error) };
  };

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>;
type ValidatorFactory = NonNullable<CompilersFactory["buildValidator"]>;
type SerializerFactory = NonNullable<CompilersFactory["buildSerializer"]>;

/**
 * Every route's validator and serializer, given to Fastify when it is made (app.ts): Fastify then
 * never loads its own, Ajv and fast-json-stringify, which no route uses and a start paid for.
 * Fastify's types name its own compilers' signatures; these take and give zod schemas.
 */
export const contractCompilers: CompilersFactory = {
  buildValidator: (() => validatorCompiler) as unknown as ValidatorFactory,
  buildSerializer: (() => serializerCompiler) as unknown as SerializerFactory,
};

/**
 * Route contracts: every route's params, query, body and responses are zod schemas from
 * `@corral/shared`. Input is validated before the handler runs; a response is checked against
 * its status's schema as it is serialized (a mismatch is a server fault, answered as a 500), both
 * by `contractCompilers`; here the same schemas make the OpenAPI document. Registered before any route.
 */
export async function registerContracts(app: FastifyInstance, sessionCookie: string): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Corral",
        version: "1",
        description:
          "Run AI CLI workers as jobs. Every route needs the token (`Authorization: Bearer <token>`) or the panel's session cookie, except those marked public.",
      },
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", description: "The Corral token (CORRAL_TOKEN, else generated in the data dir)" },
          session: { type: "apiKey", in: "cookie", name: sessionCookie, description: "The panel's browser session" },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
    },
    transform: (input) => {
      const access = (input.route.config as { access?: RouteAccess } | undefined)?.access;
      // The panel's own files are not API.
      if (access === "page") return { schema: { hide: true }, url: input.url };
      // @fastify/websocket hides its routes; /api/ws's HTTP side (the upgrade) is part of the API.
      const schema = input.route.websocket ? { ...input.schema, hide: false } : input.schema;
      const document = toJsonSchema({ ...input, schema });
      return access === "public" ? { ...document, schema: { ...document.schema, security: [] } } : document;
    },
    transformObject: usedTypes,
  });
}
