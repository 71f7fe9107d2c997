import { describeIssues, fieldIssues, type FieldIssue } from "@corral/shared";
import type { z } from "zod";

/** An error a caller can act on; every door turns it into its own kind of answer. */
export class ServiceError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 403 | 404 | 409 | 413 | 429 | 503,
    /** The input field at fault, when there is one. */
    readonly field?: string,
    readonly issues?: FieldIssue[],
  ) {
    super(message);
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
