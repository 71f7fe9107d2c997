import { z } from "zod";

export const FieldIssueSchema = z.object({ field: z.string(), message: z.string() });
export type FieldIssue = z.infer<typeof FieldIssueSchema>;

export const ApiErrorSchema = z.object({
  error: z.string(),
  issues: z.array(FieldIssueSchema).optional(),
});
export type ApiError = z.infer<typeof ApiErrorSchema>;

/** Turn zod issues into field-named messages, e.g. `prompt: the prompt is empty`. */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join(".") : "(body)",
    message: issue.message,
  }));
}

export function describeIssues(issues: FieldIssue[]): string {
  return issues.map((i) => `${i.field}: ${i.message}`).join("; ");
}
