import type { JobStatus } from "@corral/shared";

/** What `corral` exits with; docs/api.md ("The corral command") lists them. A job's end has one code per status. */
export const EXIT = {
  succeeded: 0,
  failed: 1,
  usage: 2,
  timed_out: 3,
  cancelled: 4,
  budget_exceeded: 5,
  lost: 6,
  unreachable: 7,
  unauthorized: 8,
  /** The server refused the request itself: an unknown agent or job, a field it would not take. */
  refused: 9,
  /** A fault of corral itself (its stack trace is printed). */
  internal: 70,
} as const;

/** The exit code for a job that ended with `status` (0 only for success); a job not ended yet counts as success of the command. */
export function exitForStatus(status: JobStatus): number {
  switch (status) {
    case "queued":
    case "running":
    case "succeeded":
      return EXIT.succeeded;
    default:
      return EXIT[status];
  }
}

/** An error the command reports in one message, exiting with `code`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}
