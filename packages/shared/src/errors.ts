import { z } from "zod";

export const FieldIssueSchema = z.object({ field: z.string(), message: z.string() });
export type FieldIssue = z.infer<typeof FieldIssueSchema>;

/** Every REST error answer: what went wrong, the input field at fault when there is one, and every bad field of a refused input. */
export const ApiErrorSchema = z.object({
  error: z.string(),
  field: z.string().optional(),
  issues: z.array(FieldIssueSchema).optional(),
});
export type ApiError = z.infer<typeof ApiErrorSchema>;

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
