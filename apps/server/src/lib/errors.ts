import { describeIssues, fieldIssues, type ApiErrorCode, type ApiErrorDetails, type FieldIssue } from "@corral/shared";
import type { z } from "zod";

export type Status = 400 | 403 | 404 | 409 | 413 | 416 | 429 | 503 | 504 | 507;

/** The code of an error thrown without one: what its status says. */
const codeOfStatus: Record<Status, ApiErrorCode> = {
  400: "invalid_input",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "payload_too_large",
  416: "invalid_input",
  429: "rate_limited",
  503: "unavailable",
  504: "unavailable",
  507: "disk_full",
};

/**
 * An error a caller can act on; every door turns it into its own kind of answer. The message is
 * for a person (REST's `error`, MCP's text); `code` and `details` are for programs (the panel
 * words its own message from them).
 */
export class ServiceError extends Error {
  readonly code: ApiErrorCode;
  constructor(
    message: string,
    readonly status: Status,
    /** The input field at fault, when there is one. */
    readonly field?: string,
    readonly issues?: FieldIssue[],
    code?: ApiErrorCode,
    readonly details: ApiErrorDetails = {},
  ) {
    super(message);
    this.code = code ?? codeOfStatus[status];
  }
}

export const notFound = (what: string, field?: string) => new ServiceError(what, 404, field);
export const badInput = (message: string, field: string) => new ServiceError(message, 400, field);

/** The 400 for input a shared schema refused: it names every bad field. */
export function invalidInput(error: z.ZodError): ServiceError {
  const issues = fieldIssues(error);
  return new ServiceError(`invalid input: ${describeIssues(issues)}`, 400, issues[0]?.field, issues);
}

/** Validates input with a shared schema; the error names every bad field. */
export function parseInput<S extends z.ZodType>(schema: S, data: unknown): z.infer<S> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  throw invalidInput(result.error);
}
