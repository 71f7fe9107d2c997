import { z } from "zod";

export const FieldIssueSchema = z.object({ field: z.string(), message: z.string() });
export type FieldIssue = z.infer<typeof FieldIssueSchema>;

/**
 * What kind of refusal an API error is, for programs and the panel: the `error` text is written
 * for a person (and for MCP's readers), the code is what a client branches on. Documented in docs/api.md (REST API).
 */
export const ApiErrorCodeSchema = z.enum([
  /** A field's value was refused; `field` and `issues` name it. */
  "invalid_input",
  /** The body is not JSON, or carries a prototype-pollution key. */
  "invalid_json",
  "unauthorized",
  "forbidden",
  "not_found",
  /** The request conflicts with what is stored (a name taken, a job that cannot be relaunched…). */
  "conflict",
  /** The agent is disabled: `agent` names it; enable it to run jobs. */
  "agent_disabled",
  /** A built-in agent, or one with jobs in its history, cannot be deleted: `agent` names it; disable it instead. */
  "agent_not_deletable",
  /** The agent is declared in the config file (CORRAL_CONFIG): edit it there; `agent` names it. */
  "agent_in_config_file",
  /** Another job is queued or running in the workdir: `jobId` names it; share the workdir, wait, or use another. */
  "workdir_busy",
  /** A provider's budget is used up (or this job's max_cost_usd would pass it): `budgetId` names the budget. */
  "budget_exceeded",
  /** The job queue is full (CORRAL_QUEUE_LIMIT). */
  "queue_full",
  /** Too many requests: wrong tokens from one address; retry after a while. */
  "rate_limited",
  "payload_too_large",
  /** The Ollama server did not answer. */
  "ollama_unreachable",
  "unavailable",
  /** The disk that holds the data dir is full (507): nothing was stored; free space there and try again. */
  "disk_full",
  "internal",
]);
export type ApiErrorCode = z.infer<typeof ApiErrorCodeSchema>;

/**
 * Every REST error answer: what went wrong, its code, the input field at fault when there is one,
 * every bad field of a refused input, and the ids a client needs to act on the code.
 */
export const ApiErrorSchema = z.object({
  error: z.string(),
  code: ApiErrorCodeSchema,
  field: z.string().optional(),
  issues: z.array(FieldIssueSchema).optional(),
  /** `workdir_busy`: the job using the workdir. */
  jobId: z.string().optional(),
  /** `budget_exceeded`: the budget that refused the job. */
  budgetId: z.number().int().optional(),
  /** `budget_exceeded`: that budget's provider, limits, what its period has used, and when the period ends. */
  budget: z
    .object({
      provider: z.string(),
      period: z.enum(["day", "month"]),
      maxCostUsd: z.number().nullable(),
      maxTokens: z.number().int().nullable(),
      usedCostUsd: z.number(),
      usedTokens: z.number().int(),
      periodEnd: z.number(),
    })
    .optional(),
  /** `agent_disabled`, `agent_not_deletable`: the agent. */
  agent: z.string().optional(),
});
export type ApiError = z.infer<typeof ApiErrorSchema>;
/** The ids an error code comes with. */
export type ApiErrorDetails = Pick<ApiError, "jobId" | "budgetId" | "budget" | "agent">;

/** Words for fields whose names do not read as words (units, abbreviations). */
const fieldWords: Record<string, string> = {
  timeoutS: "the timeout",
  timeout_s: "the timeout",
  maxCostUsd: "the cost limit",
  max_cost_usd: "the cost limit",
  maxTokens: "the token limit",
  max_tokens: "the token limit",
  maxConcurrent: "the number of parallel jobs",
  inputPerM: "the input price",
  outputPerM: "the output price",
  cachedInputPerM: "the cached input price",
  baseUrl: "the Ollama URL",
  args: "each argument",
  env: "the environment",
};

/** `maxConcurrent`, `shared_workdir` → "the max concurrent", "the shared workdir". */
export function fieldName(path: readonly PropertyKey[]): string {
  const key = [...path].reverse().find((p): p is string => typeof p === "string");
  if (!key) return "the input";
  return (
    fieldWords[key] ??
    `the ${key
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .replace(/_/g, " ")
      .toLowerCase()}`
  );
}

const typeWords: Record<string, string> = {
  number: "a number",
  int: "a whole number",
  string: "text",
  boolean: "true or false",
  object: "an object",
  array: "a list",
  record: "an object",
};

const sizeUnit = (origin: string, n: number | bigint) =>
  origin === "string" ? ` character${n === 1 ? "" : "s"}` : origin === "array" || origin === "set" ? ` item${n === 1 ? "" : "s"}` : "";

/**
 * A sentence naming the field for every issue a schema did not word itself, e.g. "the timeout
 * must be a whole number of 1 or more" rather than zod's "Too small: expected number to be >=1".
 * Installed as zod's error map below, so a field added to any shared schema reads the same way.
 */
export function humanIssue(issue: z.core.$ZodRawIssue): string {
  const name = fieldName(issue.path ?? []);
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return `${name} is required`;
      return `${name} must be ${typeWords[issue.expected] ?? issue.expected}`;
    case "too_small": {
      const n = issue.minimum;
      if (issue.origin === "string" && Number(n) === 1) return `${name} is empty`;
      if (issue.origin === "array" && Number(n) === 1) return `${name} needs at least one item`;
      if (issue.exact) return `${name} must be exactly ${n}${sizeUnit(issue.origin, n)}`;
      if (issue.inclusive === false) return `${name} must be more than ${n}${sizeUnit(issue.origin, n)}`;
      return `${name} must be at least ${n}${sizeUnit(issue.origin, n)}`;
    }
    case "too_big": {
      const n = issue.maximum;
      if (issue.exact) return `${name} must be exactly ${n}${sizeUnit(issue.origin, n)}`;
      if (issue.inclusive === false) return `${name} must be less than ${n}${sizeUnit(issue.origin, n)}`;
      return `${name} must be at most ${n}${sizeUnit(issue.origin, n)}`;
    }
    case "invalid_format":
      return issue.format === "url" ? `${name} must be a full URL, like http://127.0.0.1:11434` : `${name} is not in the expected form`;
    case "not_multiple_of":
      return `${name} must be a multiple of ${issue.divisor}`;
    case "unrecognized_keys":
      return `${issue.keys.map((k) => `"${k}"`).join(", ")} ${issue.keys.length === 1 ? "is not a field" : "are not fields"} here`;
    case "invalid_key": {
      const key = issue.path?.at(-1);
      return `${JSON.stringify(String(key))}: ${issue.issues[0]?.message ?? "not a valid name"}`;
    }
    case "invalid_value":
      return `${name} must be ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`}`;
    default:
      return `${name} is not valid`;
  }
}

z.config({ customError: humanIssue });

/**
 * Turn zod issues into field-named messages, e.g. `prompt: the prompt is empty`. An unknown key
 * is named itself, so a misspelt field points at the spelling to fix.
 */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => {
    const path = issue.code === "unrecognized_keys" && issue.keys[0] !== undefined ? [...issue.path, issue.keys[0]] : issue.path;
    return { field: path.length ? path.join(".") : "(body)", message: issue.message };
  });
}

export function describeIssues(issues: FieldIssue[]): string {
  return issues.map((i) => `${i.field}: ${i.message}`).join("; ");
}
