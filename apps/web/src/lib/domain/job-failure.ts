/**
 * Why a job or an attempt did not succeed, on one line: its error without the "exit code N" line
 * the worker's end begins it with (its exit code is said apart), the rest joined with " | ".
 * Undefined when nothing but the exit code is known.
 */
export function failureLine(error: string | null, exitCode: number | null): string | undefined {
  const lines = (error ?? "").split("\n").filter((line) => line.trim());
  const rest = exitCode !== null && lines[0] === `exit code ${exitCode}` ? lines.slice(1) : lines;
  return rest.join(" | ").trim() || undefined;
}
