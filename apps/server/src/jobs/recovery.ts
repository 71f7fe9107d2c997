import type { InvocationRecord } from "@corral/shared";
import type { CliAdapter } from "../agents/types.js";
import type { JobRow } from "../db/schema.js";
import { isSameProcessAlive, readExit, type JobDataPaths } from "./worker-process.js";

export type Recovery = { kind: "reattach"; pid: number; invocation: InvocationRecord; adapter: CliAdapter } | { kind: "lost"; reason: string };

/**
 * What to do at boot with a job the registry says is running: follow its worker again when that
 * worker (same pid and start time) is alive or left its exit status, else call the job lost.
 */
export function recoveryOf(row: JobRow, files: JobDataPaths, adapter: CliAdapter | undefined): Recovery {
  if (!adapter) return { kind: "lost", reason: "the server stopped while this in-process job ran" };
  const alive = row.pid !== null && isSameProcessAlive(row.pid, row.pidStart);
  if (row.pid === null || !row.invocation || (!alive && readExit(files.exit) === null)) {
    return { kind: "lost", reason: "the worker ended while the server was down and left no exit status" };
  }
  return { kind: "reattach", pid: row.pid, invocation: row.invocation, adapter };
}
